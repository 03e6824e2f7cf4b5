// Package gkefake is a wire-level fake of GKE's container API v1
// (projects.locations.clusters.list, with missingZones and Google's error
// JSON) and of Google's OAuth2 token endpoint for service accounts (the
// JWT-bearer grant with an RS256 assertion), driven by the real container
// client and golang.org/x/oauth2/google. Verify checks an access token the
// way GKE does before it trusts one, so a test can put it behind a
// kube-apiserver token webhook.
package gkefake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, the keys of Calls.
const (
	OpListClusters = "clusters.list"
	OpToken        = "token"
)

// Cluster is one cluster of the fake.
type Cluster struct {
	Project, Location, Name string
	Endpoint                string // host or https URL
	CAData                  []byte // PEM; sent base64 as GKE does
	Network, Subnetwork     string
	Labels                  map[string]string
	Status                  string    // default RUNNING
	Created                 time.Time // createTime; none when zero
}

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	mu       sync.Mutex
	clusters []Cluster
	missing  map[string][]string // project -> missing zones
	denied   map[string]bool
	throttle int
	keys     map[string]*rsa.PublicKey // service account email -> key
	tokens   map[string]issued
	now      func() time.Time
	lifetime time.Duration
	Latency  time.Duration
}

type issued struct {
	email   string
	expires time.Time
}

// New returns an empty fake; Start serves it.
func New() *Server {
	return &Server{missing: map[string][]string{}, denied: map[string]bool{}, keys: map[string]*rsa.PublicKey{},
		tokens: map[string]issued{}, now: time.Now, lifetime: time.Hour}
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// Endpoint is the container API endpoint to give the client.
func (s *Server) Endpoint() string { return s.URL() + "/" }

// Add adds clusters.
func (s *Server) Add(cs ...Cluster) {
	s.mu.Lock()
	s.clusters = append(s.clusters, cs...)
	s.mu.Unlock()
}

// MissingZones makes a project's listing report zones that did not answer.
func (s *Server) MissingZones(project string, zones ...string) {
	s.mu.Lock()
	s.missing[project] = zones
	s.mu.Unlock()
}

// Deny makes a project's listing answer 403.
func (s *Server) Deny(project string) { s.mu.Lock(); s.denied[project] = true; s.mu.Unlock() }

// ThrottleNext makes the next n listings answer 429.
func (s *Server) ThrottleNext(n int) { s.mu.Lock(); s.throttle = n; s.mu.Unlock() }

// SetClock replaces the fake's clock, and the lifetime of the tokens it issues.
func (s *Server) SetClock(now func() time.Time, lifetime time.Duration) {
	s.mu.Lock()
	s.now, s.lifetime = now, lifetime
	s.mu.Unlock()
}

// ServiceAccountKey makes a service account and returns its JSON key, whose
// token_uri is this fake.
func (s *Server) ServiceAccountKey(email string) []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	s.mu.Lock()
	s.keys[email] = &k.PublicKey
	s.mu.Unlock()
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "fake-project", "private_key_id": hex.EncodeToString(id),
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "100000000000000000001", "token_uri": s.URL() + "/token",
		"auth_uri": s.URL() + "/auth",
	})
	return b
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/token" && r.Method == http.MethodPost:
		s.Count(OpToken, false)
		s.token(w, r)
	case r.URL.Path == "/tokeninfo":
		email, err := s.Verify(r.URL.Query().Get("access_token"))
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_token", "error_description": err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"email": email, "email_verified": "true"})
	case strings.HasPrefix(r.URL.Path, "/v1/projects/") && strings.HasSuffix(r.URL.Path, "/clusters") && r.Method == http.MethodGet:
		s.Count(OpListClusters, false)
		fakeapi.Saw(Permission(OpListClusters))
		if !fakeapi.Delay(r.Context(), s.Latency) {
			return
		}
		s.list(w, r)
	default:
		gerr(w, http.StatusNotFound, "NOT_FOUND", "no such method "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/") // projects P locations L clusters
	if len(p) != 5 || p[0] != "projects" || p[2] != "locations" {
		gerr(w, http.StatusBadRequest, "INVALID_ARGUMENT", "bad parent")
		return
	}
	project, location := p[1], p[3]
	s.mu.Lock()
	throttled := s.throttle > 0
	if throttled {
		s.throttle--
	}
	denied, missing := s.denied[project], s.missing[project]
	var out []map[string]any
	for _, c := range s.clusters {
		if c.Project != project || (location != "-" && c.Location != location) {
			continue
		}
		status := c.Status
		if status == "" {
			status = "RUNNING"
		}
		k := map[string]any{"name": c.Name, "location": c.Location, "zone": c.Location, "status": status,
			"network": c.Network, "subnetwork": c.Subnetwork, "resourceLabels": c.Labels,
			"selfLink":             fmt.Sprintf("https://container.googleapis.com/v1/projects/%s/locations/%s/clusters/%s", project, c.Location, c.Name),
			"currentMasterVersion": "1.31.4-gke.1000"}
		if !c.Created.IsZero() {
			k["createTime"] = c.Created.UTC().Format(time.RFC3339) // "2026-03-02T10:11:12Z", as GKE sends it
		}
		if c.Endpoint != "" {
			k["endpoint"] = strings.TrimPrefix(c.Endpoint, "https://")
		}
		if len(c.CAData) > 0 {
			k["masterAuth"] = map[string]any{"clusterCaCertificate": base64.StdEncoding.EncodeToString(c.CAData)}
		}
		out = append(out, k)
	}
	s.mu.Unlock()
	switch {
	case throttled:
		gerr(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Read requests'")
		return
	case denied:
		gerr(w, http.StatusForbidden, "PERMISSION_DENIED", "Required \"container.clusters.list\" permission(s) for \"projects/"+project+"\".")
		return
	}
	resp := map[string]any{"clusters": out}
	if len(missing) > 0 {
		resp["missingZones"] = missing
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// token answers the JWT-bearer grant: the assertion must be signed by a key
// this fake made, for this token URI, and not expired.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	fail := func(desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail("want grant_type urn:ietf:params:oauth:grant-type:jwt-bearer")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		fail("malformed assertion")
		return
	}
	var claims struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Scope string `json:"scope"`
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(body, &claims) != nil {
		fail("malformed claims")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	s.mu.Lock()
	pub := s.keys[claims.Iss]
	now := s.now()
	s.mu.Unlock()
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch {
	case pub == nil:
		fail("unknown service account " + claims.Iss)
		return
	case err != nil || rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil:
		fail("Invalid JWT Signature.")
		return
	case claims.Aud != s.URL()+"/token":
		fail("Invalid JWT: audience")
		return
	case now.Unix() > claims.Exp:
		fail("Invalid JWT: Token must be a short-lived token")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "ya29.fake-" + base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = issued{email: claims.Iss, expires: now.Add(s.lifetime)}
	lifetime := s.lifetime
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": int(lifetime.Seconds()), "token_type": "Bearer"})
}

// Verify returns the service account an access token was issued to; an
// unknown or expired token is an error.
func (s *Server) Verify(token string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	switch {
	case !ok:
		return "", errors.New("unknown access token")
	case s.now().After(t.expires):
		return "", errors.New("access token expired")
	}
	return t.email, nil
}

// gerr answers with Google's error JSON.
func gerr(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}
