// Command gcsserver is the GCS the end-to-end tests publish cluster records
// to: fake-gcs-server's implementation of the GCS JSON API (in memory),
// behind a small stand-in for IAM. With -policy, each identity (a service
// account's email) may read and write only the object prefixes the policy
// grants it, as a per-agent IAM condition on resource.name would; a
// request from an identity the policy does not grant gets GCS's 403.
//
// Identities come from OAuth: POST /token is a token endpoint (a service
// account key file's token_uri) that answers a signed JWT assertion with
// an access token naming the assertion's issuer; a self-signed JWT sent
// as the bearer token names its issuer too. Signatures are not checked:
// this stands in for IAM's grants, not for Google's authentication.
//
// With -clock, the time objects are said to be written (updated,
// timeCreated) is the real time plus the offset the file holds at the
// upload, so that a test whose clock is simulated moves the store's with
// it: fake-gcs-server stamps the real time, and this restamps what it
// answers.
//
// It prints its URL on the first line of its output.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// grant is what one identity may do, by object name prefix
// ("bucket/prefix"): read (get, list), list only (GCS grants
// storage.objects.list on the bucket, never per object, so a reader whose
// gets are conditioned per object still lists), and write (create,
// replace, delete).
type grant struct {
	Read  []string `json:"read"`
	List  []string `json:"list"`
	Write []string `json:"write"`
}

const tokenPrefix = "gcsserver-token/"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	policyFile := flag.String("policy", "", "JSON file: identity -> {read: [bucket/prefix...], write: [...]}; without it every request is allowed")
	buckets := flag.String("buckets", "", "comma-separated buckets to create")
	clockFile := flag.String("clock", "", "file holding the offset (a Go duration) of the store's clock from the real one; none: the real time")
	flag.Parse()

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", ExternalURL: base,
		PublicHost: l.Addr().String(), Writer: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range strings.Split(*buckets, ",") {
		if b != "" {
			srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
		}
	}
	var policy map[string]grant
	if *policyFile != "" {
		raw, err := os.ReadFile(*policyFile)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(raw, &policy); err != nil {
			log.Fatalf("%s: %v", *policyFile, err)
		}
	}
	var gcs http.Handler = srv.HTTPHandler()
	if *clockFile != "" {
		gcs = &restamp{next: gcs, clock: *clockFile, at: map[string]string{}}
	}
	fmt.Printf("%s\n", base)
	log.Fatal(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			token(w, r)
			return
		}
		if policy != nil {
			who := identity(r)
			if who == "" {
				fail(w, http.StatusUnauthorized, "Anonymous caller does not have storage access.", "required")
				return
			}
			perm, target, err := wants(r)
			if err != nil {
				fail(w, http.StatusBadRequest, err.Error(), "invalid")
				return
			}
			if !granted(policy[who], perm, target) {
				log.Printf("denied: %s %s on %s", who, perm, target)
				fail(w, http.StatusForbidden, fmt.Sprintf("%s does not have %s access to the Google Cloud Storage object %s.", who, perm, target), "forbidden")
				return
			}
		}
		gcs.ServeHTTP(w, r)
	})))
}

// token answers an OAuth JWT-bearer grant with a token naming the
// assertion's issuer.
func token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, err.Error(), "invalid")
		return
	}
	iss := issuer(r.PostForm.Get("assertion"))
	if iss == "" {
		fail(w, http.StatusBadRequest, "no JWT assertion with an issuer", "invalid")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tokenPrefix + iss, "token_type": "Bearer", "expires_in": 3600})
}

// identity is who the request's bearer token names: "" for none.
func identity(r *http.Request) string {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	if who, ok := strings.CutPrefix(t, tokenPrefix); ok {
		return who
	}
	return issuer(t)
}

// issuer is a JWT's iss claim, unverified.
func issuer(jwt string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return ""
	}
	return claims.Iss
}

// wants is the permission a request needs and the "bucket/object" (or,
// for a listing, "bucket/prefix") it needs it on. A request this does not
// know needs a write grant on everything (an administrator's).
func wants(r *http.Request) (perm, target string, err error) {
	p := r.URL.EscapedPath()
	object := func(rest string) (string, string, error) {
		b, o, ok := strings.Cut(rest, "/o/")
		if !ok || strings.Contains(b, "/") {
			return "", "", fmt.Errorf("gcsserver: no object in %s", p)
		}
		name, err := url.PathUnescape(o)
		return b, name, err
	}
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.HasPrefix(p, "/download/storage/v1/b/"):
		b, o, err := object(strings.TrimPrefix(p, "/download/storage/v1/b/"))
		return "storage.objects.get", b + "/" + o, err
	case strings.HasPrefix(p, "/storage/v1/b/"):
		rest := strings.TrimPrefix(p, "/storage/v1/b/")
		if b, ok := strings.CutSuffix(strings.TrimSuffix(rest, "/"), "/o"); ok && r.Method == http.MethodGet && !strings.Contains(b, "/") {
			return "storage.objects.list", b + "/" + r.URL.Query().Get("prefix"), nil
		}
		b, o, err := object(rest)
		if err != nil {
			break
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			return "storage.objects.get", b + "/" + o, nil
		case http.MethodDelete:
			return "storage.objects.delete", b + "/" + o, nil
		}
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/upload/storage/v1/b/"):
		b, ok := strings.CutSuffix(strings.TrimSuffix(strings.TrimPrefix(p, "/upload/storage/v1/b/"), "/"), "/o")
		if !ok || strings.Contains(b, "/") {
			break
		}
		if t := r.URL.Query().Get("uploadType"); t != "multipart" && t != "media" {
			return "", "", fmt.Errorf("gcsserver: only single-request uploads (multipart, media) are authorized, not %q", t)
		}
		name, err := uploadName(r)
		return "storage.objects.create", b + "/" + name, err
	}
	return "admin", "", nil
}

// uploadName is the name an upload writes: the query's name, or its
// metadata's; both, they must agree (the server would write the
// metadata's).
func uploadName(r *http.Request) (string, error) {
	q := r.URL.Query().Get("name")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	meta := ""
	if strings.HasPrefix(mt, "multipart/") {
		part, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart()
		if err != nil {
			return "", fmt.Errorf("gcsserver: multipart upload: %w", err)
		}
		var m struct {
			Name string `json:"name"`
		}
		if err := json.NewDecoder(part).Decode(&m); err != nil {
			return "", fmt.Errorf("gcsserver: multipart upload's metadata: %w", err)
		}
		meta = m.Name
	}
	switch {
	case q != "" && meta != "" && q != meta:
		return "", fmt.Errorf("gcsserver: the upload names %q in its query and %q in its metadata", q, meta)
	case meta != "":
		return meta, nil
	case q != "":
		return q, nil
	}
	return "", fmt.Errorf("gcsserver: the upload names no object")
}

// granted says whether g grants perm on target.
func granted(g grant, perm, target string) bool {
	prefixes := g.Write
	switch perm {
	case "storage.objects.get":
		prefixes = g.Read
	case "storage.objects.list":
		prefixes = append(slices.Clone(g.Read), g.List...)
	case "admin":
		target = "\x00" // only a grant of everything ("") covers it
	}
	for _, p := range prefixes {
		if strings.HasPrefix(target, p) {
			return true
		}
	}
	return false
}

// fail answers as GCS's JSON API does.
func fail(w http.ResponseWriter, code int, msg, reason string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]string{{"message": msg, "domain": "global", "reason": reason}}}})
}

// restamp stamps each object uploaded through it with the store's clock
// (by bucket, name and generation) and answers that time as the object's
// updated and timeCreated when it is listed or read.
type restamp struct {
	next  http.Handler
	clock string // the file holding the offset
	mu    sync.Mutex
	at    map[string]string
}

func (s *restamp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	upload := r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/storage/v1/b/")
	read := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/storage/v1/b/")
	if !upload && !read {
		s.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err == nil {
			items, _ := doc["items"].([]any)
			if _, ok := doc["name"]; ok {
				items = append(items, doc)
			}
			for _, it := range items {
				if o, ok := it.(map[string]any); ok {
					s.object(o, upload)
				}
			}
			if b, err := json.Marshal(doc); err == nil {
				body = b
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// object stamps o (an upload's answer) or restamps it (a listing's item or
// a read's answer) with the time its upload was stamped.
func (s *restamp) object(o map[string]any, upload bool) {
	key := fmt.Sprintf("%v/%v#%v", o["bucket"], o["name"], o["generation"])
	s.mu.Lock()
	defer s.mu.Unlock()
	if upload {
		s.at[key] = s.now().UTC().Format(time.RFC3339Nano)
	}
	if at, ok := s.at[key]; ok {
		o["updated"], o["timeCreated"] = at, at
	}
}

// now is the real time plus the clock file's offset (none if unreadable).
func (s *restamp) now() time.Time {
	now := time.Now()
	raw, err := os.ReadFile(s.clock)
	if err != nil {
		return now
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(raw)))
	if err != nil {
		log.Printf("clock %s: %v", s.clock, err)
		return now
	}
	return now.Add(d)
}
