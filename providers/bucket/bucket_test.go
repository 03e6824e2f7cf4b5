package bucket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
)

const owner = "123456789012"

func client(t *testing.T, srv *testenv.S3Server, key string) *bucket.Client {
	t.Helper()
	c, err := bucket.New(context.Background(), bucket.Options{Bucket: "fleet", PathStyle: true, Service: awsclient.Service{
		Account: owner, Region: "us-east-1", Endpoint: srv.URL, MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(key, "secret", "")}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Against a real S3 implementation (gofakes3, testbins/s3server): a put
// reads back whole; a missing object is ErrNotFound; what the identity is
// not granted is ErrDenied; a put cut off mid-body leaves the object it
// was replacing.
func TestBucket(t *testing.T) {
	ctx := context.Background()
	srv, err := testenv.StartS3(ctx, t.TempDir(), map[string]testenv.S3Grant{
		"AKIDAGENT":   {Write: []string{"fleet/clusters/a/"}, Read: []string{"fleet/clusters/a/"}},
		"AKIDDELETER": {Read: []string{"fleet/"}},
	}, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	agent, deleter, stranger := client(t, srv, "AKIDAGENT"), client(t, srv, "AKIDDELETER"), client(t, srv, "AKIDSTRANGER")
	key := "clusters/a/rec.json.gz"
	first := bytes.Repeat([]byte("first record "), 1000)
	if err := agent.Put(ctx, key, first); err != nil {
		t.Fatal(err)
	}
	got, err := deleter.Get(ctx, key)
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if _, err := deleter.Get(ctx, "clusters/b/rec.json.gz"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("a missing record: %v", err)
	}
	if _, err := stranger.Get(ctx, key); !errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("an identity without a grant: %v", err)
	}
	if err := agent.Put(ctx, "clusters/b/rec.json.gz", first); !errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("an agent writing outside its prefix: %v", err)
	}
	if err := deleter.Put(ctx, key, []byte("x")); !errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("the deleter writing: %v", err)
	}

	// An agent killed mid-write: the connection ends before the body does.
	u, _ := url.Parse(srv.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /fleet/%s HTTP/1.1\r\nHost: %s\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIDAGENT/20261127/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0\r\nX-Amz-Content-Sha256: UNSIGNED-PAYLOAD\r\nContent-Length: 100000\r\n\r\n", key, u.Host)
	conn.Write(bytes.Repeat([]byte("half"), 1000))
	conn.Close()
	time.Sleep(200 * time.Millisecond)
	got, err = deleter.Get(ctx, key)
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("after a write cut off: %d bytes (%q...), %v; want the first record whole", len(got), got[:min(len(got), 20)], err)
	}
}
