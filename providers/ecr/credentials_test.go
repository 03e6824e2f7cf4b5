package ecr

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
)

// signedBy records the access key of every request the fake answers.
type signedBy struct {
	mu   sync.Mutex
	keys map[string]int
}

func (s *signedBy) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if i := strings.Index(auth, "Credential="); i >= 0 {
			key, _, _ := strings.Cut(auth[i+len("Credential="):], "/")
			s.mu.Lock()
			s.keys[key]++
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func credsWorld(t *testing.T) (*signedBy, string) {
	t.Helper()
	fake := ecrfake.New(ecrfake.Options{Region: "us-east-1"})
	fake.AddRepository("123456789012", "app", time.Now().Add(-time.Hour), nil)
	fake.AddImage("123456789012", "app", ecrfake.NewManifest("a", time.Now().Add(-time.Hour), "v1"))
	s := &signedBy{keys: map[string]int{}}
	srv := httptest.NewServer(s.wrap(fake))
	t.Cleanup(srv.Close)
	// No credentials or config of the machine running the test.
	dir := t.TempDir()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_ECR": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials")} {
		t.Setenv(k, v)
	}
	return s, srv.URL
}

// A registry reached through a shared-config profile signs with that
// profile's keys.
func TestProfileCredentials(t *testing.T) {
	signed, endpoint := credsWorld(t)
	cfg := "[profile registry-a]\naws_access_key_id = AKIDPROFILEA\naws_secret_access_key = secret-a\n\n" +
		"[profile registry-b]\naws_access_key_id = AKIDPROFILEB\naws_secret_access_key = secret-b\n"
	if err := os.WriteFile(os.Getenv("AWS_CONFIG_FILE"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), Options{Service: awsclient.Service{Account: "123456789012", Region: "us-east-1", Profile: "registry-b", Endpoint: endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	if l := c.ListAll(context.Background()); !l.Complete || len(l.Repos) != 1 || !l.Repos[0].Complete {
		t.Fatalf("listing %+v", l)
	}
	if signed.keys["AKIDPROFILEB"] == 0 || signed.keys["AKIDPROFILEA"] != 0 {
		t.Fatalf("requests signed by %v, want only AKIDPROFILEB", signed.keys)
	}
}

// A registry with roleARN is read with the role's credentials from STS
// AssumeRole (found through AWS_ENDPOINT_URL_STS), with the external id.
func TestAssumedRoleCredentials(t *testing.T) {
	signed, endpoint := credsWorld(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDBASE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "base-secret")
	var mu sync.Mutex
	var got url.Values
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		got = r.PostForm
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser><Arn>arn:aws:sts::012345678910:assumed-role/reclaim/reclaim</Arn><AssumedRoleId>AROAEXAMPLE:reclaim</AssumedRoleId></AssumedRoleUser>
    <Credentials><AccessKeyId>ASIAROLEKEY</AccessKeyId><SecretAccessKey>role-secret</SecretAccessKey><SessionToken>token</SessionToken><Expiration>%s</Expiration></Credentials>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(sts.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)

	c, err := New(context.Background(), Options{
		Service: awsclient.Service{
			Account:    "123456789012",
			Region:     "us-east-1",
			Endpoint:   endpoint,
			RoleARN:    "arn:aws:iam::012345678910:role/reclaim",
			ExternalID: "reclaim-ext",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if l := c.ListAll(context.Background()); !l.Complete || len(l.Repos) != 1 {
		t.Fatalf("listing %+v", l)
	}
	mu.Lock()
	defer mu.Unlock()
	if got.Get("Action") != "AssumeRole" || got.Get("RoleArn") != "arn:aws:iam::012345678910:role/reclaim" || got.Get("ExternalId") != "reclaim-ext" {
		t.Fatalf("STS request %v", got)
	}
	if signed.keys["ASIAROLEKEY"] == 0 || signed.keys["AKIDBASE"] != 0 {
		t.Fatalf("ECR requests signed by %v, want only the role's key", signed.keys)
	}
}
