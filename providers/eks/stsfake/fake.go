// Package stsfake is a fake of STS (Query protocol, XML answers). It serves
// GetCallerIdentity two ways: as EKS's authenticator calls it, through the
// presigned URL inside a k8s-aws-v1 token (it checks the SigV4 query
// signature with the caller's secret, the signed x-k8s-aws-id header and
// the token's age), and as the SDK's client calls it, a signed form POST
// whose caller is the access key of its Authorization header. Either
// answers the account and ARN of the Identity the key belongs to: a test
// makes it answer another account by giving the key an Identity of that
// account (New, Add), or by assuming a role of it (AddRole: AssumeRole and
// AssumeRoleWithWebIdentity issue temporary credentials of the role's
// account). Verify does what aws-iam-authenticator's server does with a
// token, so a test can put it behind a kube-apiserver token webhook.
package stsfake

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Token format (providers/eks makes it).
const (
	tokenPrefix   = "k8s-aws-v1."
	clusterHeader = "x-k8s-aws-id"
	// Lifetime is how long a token is accepted after it was signed.
	Lifetime = 15 * time.Minute
	// emptySHA256 is the payload hash of a presigned GET.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// Identity is who a key belongs to.
type Identity struct {
	AccessKeyID, SecretAccessKey string
	ARN, Account, UserID         string
}

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	mu    sync.Mutex
	ids   map[string]Identity
	roles map[string]string // role ARN → the web identity token it accepts ("" none)
	now   func() time.Time
}

// New returns a fake that knows the identities; Start serves it.
func New(ids ...Identity) *Server {
	s := &Server{ids: map[string]Identity{}, roles: map[string]string{}, now: time.Now}
	for _, id := range ids {
		s.ids[id.AccessKeyID] = id
	}
	return s
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// Add adds identities, or replaces the identity of a known access key: a
// test makes the fake answer another account for a key by adding it again
// with that account.
func (s *Server) Add(ids ...Identity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.ids[id.AccessKeyID] = id
	}
}

// SetClock replaces the fake's clock (expiry tests).
func (s *Server) SetClock(now func() time.Time) { s.mu.Lock(); s.now = now; s.mu.Unlock() }

// AddRole lets a known identity assume roleARN (AssumeRole), and a caller
// holding webToken too (AssumeRoleWithWebIdentity, as EKS's IRSA does with
// the projected token) when it is not empty. Each assumption issues
// temporary credentials that the fake then knows as the role.
func (s *Server) AddRole(roleARN, webToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[roleARN] = webToken
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		s.assume(w, r)
		return
	}
	s.Count(OpGetCallerIdentity, false)
	fakeapi.Saw("sts:GetCallerIdentity")
	id, code, err := s.check(r)
	if err != nil {
		writeErr(w, code, err)
		return
	}
	writeIdentity(w, id)
}

// OpGetCallerIdentity is the operation's name, its key in Calls: presigned
// (a token) or posted (the SDK's client) alike.
const OpGetCallerIdentity = "GetCallerIdentity"

// writeIdentity answers GetCallerIdentity as STS does.
func writeIdentity(w http.ResponseWriter, id Identity) {
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>%s</Arn>
    <UserId>%s</UserId>
    <Account>%s</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata>
    <RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId>
  </ResponseMetadata>
</GetCallerIdentityResponse>
`, id.ARN, id.UserID, id.Account)
}

type stsError struct{ code, msg string }

func (e *stsError) Error() string { return e.code + ": " + e.msg }

func writeErr(w http.ResponseWriter, status int, err error) {
	var se *stsError
	if !errors.As(err, &se) {
		se = &stsError{"InvalidClientTokenId", err.Error()}
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error>
  <RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId>
</ErrorResponse>
`, se.code, xmlEscape(se.msg))
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// check verifies a presigned GetCallerIdentity as STS does.
func (s *Server) check(r *http.Request) (Identity, int, error) {
	q := r.URL.Query()
	if q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15" {
		return Identity{}, http.StatusBadRequest, &stsError{"InvalidAction", "only GetCallerIdentity, Version 2011-06-15"}
	}
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
		return Identity{}, http.StatusForbidden, &stsError{"IncompleteSignature", "not a SigV4 presigned request"}
	}
	cred := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(cred) != 5 || cred[3] != "sts" || cred[4] != "aws4_request" {
		return Identity{}, http.StatusForbidden, &stsError{"IncompleteSignature", "bad X-Amz-Credential"}
	}
	s.mu.Lock()
	id, known := s.ids[cred[0]]
	now := s.now()
	s.mu.Unlock()
	if !known {
		return Identity{}, http.StatusForbidden, &stsError{"InvalidClientTokenId", "The security token included in the request is invalid."}
	}
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return Identity{}, http.StatusForbidden, &stsError{"IncompleteSignature", "bad X-Amz-Date"}
	}
	if _, err := strconv.Atoi(q.Get("X-Amz-Expires")); err != nil {
		return Identity{}, http.StatusForbidden, &stsError{"IncompleteSignature", "bad X-Amz-Expires"}
	}
	if now.After(signed.Add(Lifetime)) {
		return Identity{}, http.StatusForbidden, &stsError{"ExpiredToken", "Request has expired"}
	}
	headers := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	// Re-sign what was signed with the key's secret and compare.
	u := *r.URL
	uq := u.Query()
	uq.Del("X-Amz-Signature")
	u.RawQuery = uq.Encode()
	u.Scheme, u.Host = "http", r.Host
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	for _, h := range headers {
		if h != "host" {
			req.Header.Set(h, r.Header.Get(h))
		}
	}
	got, _, err := v4.NewSigner().PresignHTTP(r.Context(), aws.Credentials{AccessKeyID: id.AccessKeyID, SecretAccessKey: id.SecretAccessKey},
		req, emptySHA256, "sts", cred[2], signed)
	if err != nil {
		return Identity{}, http.StatusInternalServerError, err
	}
	gu, _ := url.Parse(got)
	if gu == nil || gu.Query().Get("X-Amz-Signature") != q.Get("X-Amz-Signature") {
		return Identity{}, http.StatusForbidden, &stsError{"SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."}
	}
	return id, 0, nil
}

// Verify checks a bearer token the way aws-iam-authenticator's server does
// and returns the caller's ARN: the k8s-aws-v1 prefix, a presigned
// GetCallerIdentity for this fake's host (never a URL of the caller's
// choosing), the cluster header among the signed ones, then the call itself,
// made with the cluster's own name in the header.
func (s *Server) Verify(ctx context.Context, token, cluster string) (string, error) {
	raw, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", errors.New("not a k8s-aws-v1 token")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return "", errors.New("token is not base64url")
	}
	u, err := url.Parse(string(b))
	if err != nil {
		return "", errors.New("token holds no URL")
	}
	mine, _ := url.Parse(s.URL())
	if mine == nil || u.Host != mine.Host {
		return "", fmt.Errorf("token is for host %q, not STS", u.Host)
	}
	q := u.Query()
	if q.Get("Action") != "GetCallerIdentity" {
		return "", errors.New("token is not a GetCallerIdentity")
	}
	if !slices.Contains(strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), clusterHeader) {
		return "", errors.New("token does not sign " + clusterHeader)
	}
	if n, err := strconv.Atoi(q.Get("X-Amz-Expires")); err != nil || n > 60 {
		return "", errors.New("token's X-Amz-Expires is missing or above 60")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set(clusterHeader, cluster)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Code string `xml:"Error>Code"`
		}
		_ = xml.Unmarshal(body, &e)
		return "", fmt.Errorf("STS refused the token: %s", e.Code)
	}
	var out struct {
		ARN string `xml:"GetCallerIdentityResult>Arn"`
	}
	if err := xml.Unmarshal(body, &out); err != nil || out.ARN == "" {
		return "", errors.New("STS answered no ARN")
	}
	return out.ARN, nil
}

// callerKey is the access key of a signed request's Authorization header.
func callerKey(r *http.Request) string {
	_, after, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(after, "/")
	return key
}

// assume answers GetCallerIdentity, AssumeRole and AssumeRoleWithWebIdentity
// as the SDK's client sends them (Query protocol, a form POST).
// GetCallerIdentity's and AssumeRole's caller is the access key of the
// Authorization header, which must be known; its signature is not checked.
func (s *Server) assume(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeErr(w, http.StatusBadRequest, &stsError{"MalformedInput", err.Error()})
		return
	}
	action, role, session := r.PostForm.Get("Action"), r.PostForm.Get("RoleArn"), r.PostForm.Get("RoleSessionName")
	s.Count(action, false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if action == OpGetCallerIdentity {
		fakeapi.Saw("sts:GetCallerIdentity")
		id, ok := s.ids[callerKey(r)]
		if v := r.PostForm.Get("Version"); v != "2011-06-15" {
			writeErr(w, http.StatusBadRequest, &stsError{"InvalidAction", "Could not find operation GetCallerIdentity for version " + v})
			return
		}
		if !ok {
			writeErr(w, http.StatusForbidden, &stsError{"InvalidClientTokenId", "The security token included in the request is invalid."})
			return
		}
		writeIdentity(w, id)
		return
	}
	webToken, known := s.roles[role]
	switch action {
	case "AssumeRole":
		fakeapi.Saw("sts:AssumeRole")
		if _, ok := s.ids[callerKey(r)]; !ok {
			writeErr(w, http.StatusForbidden, &stsError{"InvalidClientTokenId", "The security token included in the request is invalid."})
			return
		}
	case "AssumeRoleWithWebIdentity":
		if !known || webToken == "" || r.PostForm.Get("WebIdentityToken") != webToken {
			writeErr(w, http.StatusBadRequest, &stsError{"InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider"})
			return
		}
	default:
		writeErr(w, http.StatusBadRequest, &stsError{"InvalidAction", "Could not find operation " + action + " for version 2011-06-15"})
		return
	}
	if !known || session == "" {
		writeErr(w, http.StatusForbidden, &stsError{"AccessDenied", "Not authorized to perform sts:" + action + " on " + role})
		return
	}
	arnParts := strings.Split(role, ":")
	roleName := role[strings.LastIndex(role, "/")+1:]
	if len(arnParts) < 6 {
		writeErr(w, http.StatusBadRequest, &stsError{"ValidationError", "RoleArn is not an ARN"})
		return
	}
	n := len(s.ids) + 1
	id := Identity{AccessKeyID: fmt.Sprintf("ASIAFAKE%012d", n), SecretAccessKey: fmt.Sprintf("fake-secret-%d", n),
		Account: arnParts[4], UserID: "AROAFAKE:" + session,
		ARN: "arn:aws:sts::" + arnParts[4] + ":assumed-role/" + roleName + "/" + session}
	s.ids[id.AccessKeyID] = id
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<%[1]sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <%[1]sResult>
    <AssumedRoleUser><Arn>%[2]s</Arn><AssumedRoleId>%[3]s</AssumedRoleId></AssumedRoleUser>
    <Credentials>
      <AccessKeyId>%[4]s</AccessKeyId>
      <SecretAccessKey>%[5]s</SecretAccessKey>
      <SessionToken>fake-session-%[4]s</SessionToken>
      <Expiration>%[6]s</Expiration>
    </Credentials>
  </%[1]sResult>
  <ResponseMetadata><RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId></ResponseMetadata>
</%[1]sResponse>
`, action, id.ARN, id.UserID, id.AccessKeyID, id.SecretAccessKey, s.now().Add(time.Hour).UTC().Format(time.RFC3339))
}
