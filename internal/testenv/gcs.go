package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
)

// GCSServerBin is the GCS the agent tests publish to (testbins/gcsserver:
// fake-gcs-server behind a stand-in for IAM).
const GCSServerBin = "gcsserver"

// GCSGrant is what one identity (a service account's email) may do in a
// GCSServer: read (get, list), list only (as GCS's bucket-wide
// storage.objects.list beside gets conditioned per object), and write
// (create, replace, delete) objects under "bucket/prefix" prefixes.
type GCSGrant struct {
	Read  []string `json:"read,omitempty"`
	List  []string `json:"list,omitempty"`
	Write []string `json:"write,omitempty"`
}

// GCSServer is a running gcsserver.
type GCSServer struct {
	// URL is its root (http://127.0.0.1:PORT); the JSON API is under
	// URL/storage/v1/.
	URL string
	// Clock is the time it stamps objects with.
	Clock StoreClock
	proc  *process
}

// StartGCS starts a gcsserver with buckets, its log under dir. With a
// policy, each identity may only do what its grant says (others get 403);
// without one, everything is allowed. It is killed by Stop, or when the
// test process exits.
func StartGCS(ctx context.Context, dir string, policy map[string]GCSGrant, buckets ...string) (*GCSServer, error) {
	clock := StoreClock{file: filepath.Join(dir, "gcs-clock")}
	args := []string{"-buckets", strings.Join(buckets, ","), "-clock", clock.file}
	if policy != nil {
		raw, err := json.Marshal(policy)
		if err != nil {
			return nil, err
		}
		f := filepath.Join(dir, "gcs-policy.json")
		if err := os.WriteFile(f, raw, 0o600); err != nil {
			return nil, err
		}
		args = append(args, "-policy", f)
	}
	u, p, err := startServing(ctx, GCSServerBin, filepath.Join(dir, "gcsserver.log"), args...)
	if err != nil {
		return nil, err
	}
	return &GCSServer{URL: u, Clock: clock, proc: p}, nil
}

// Endpoint is the JSON API's base URL, as a client's endpoint option
// takes it.
func (s *GCSServer) Endpoint() string { return s.URL + "/storage/v1/" }

// KeyFile writes a service account key file for email into dir (a fresh
// RSA key; its token_uri the server's token endpoint) and returns its
// path: a client with it is email to the server's policy.
func (s *GCSServer) KeyFile(dir, email string) (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(map[string]string{"type": "service_account", "project_id": "my-gke-project",
		"private_key_id": "test", "private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "1", "token_uri": s.URL + "/token"})
	if err != nil {
		return "", err
	}
	name, _, _ := strings.Cut(email, "@")
	f := filepath.Join(dir, "gcs-key-"+name+".json")
	return f, os.WriteFile(f, raw, 0o600)
}

// Stop kills the server.
func (s *GCSServer) Stop() { s.proc.kill() }
