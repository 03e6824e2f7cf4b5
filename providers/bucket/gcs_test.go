package bucket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/gcpclient"
)

const (
	agentSA   = "agent-a@my-gke-project.iam.gserviceaccount.com"
	readerSA  = "deleter@my-gke-project.iam.gserviceaccount.com"
	strangeSA = "stranger@my-gke-project.iam.gserviceaccount.com"
)

// startGCS is a real GCS (testenv's gcsserver) where the agent may write
// and read records/a/, the deleter read records/, the stranger nothing.
func startGCS(t *testing.T) *testenv.GCSServer {
	t.Helper()
	srv, err := testenv.StartGCS(context.Background(), t.TempDir(), map[string]testenv.GCSGrant{
		agentSA:  {Read: []string{"fleet/records/a/"}, Write: []string{"fleet/records/a/"}},
		readerSA: {Read: []string{"fleet/records/"}},
	}, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func gcsClient(t *testing.T, srv *testenv.GCSServer, who string, o bucket.GCSOptions) *bucket.GCS {
	t.Helper()
	key, err := srv.KeyFile(t.TempDir(), who)
	if err != nil {
		t.Fatal(err)
	}
	o.Bucket, o.MaxAttempts = "fleet", 1
	o.Reach = gcpclient.Reach{Endpoint: srv.Endpoint(), CredentialsFile: key, UserAgent: "reclaim/test"}
	c, err := bucket.NewGCS(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The GCS store keeps the S3 store's contract: a put replaces the object
// whole, a get reads it back, a missing object is not found, a refused one
// is denied (never not found), and the listing's versions change exactly
// when an object is replaced.
func TestGCSPutGetListAndTheirErrors(t *testing.T) {
	srv := startGCS(t)
	ctx := context.Background()
	agent := gcsClient(t, srv, agentSA, bucket.GCSOptions{})
	reader := gcsClient(t, srv, readerSA, bucket.GCSOptions{PageSize: 2})

	if err := agent.Put(ctx, "records/a/one.json.gz", []byte("first")); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := agent.Put(ctx, fmt.Sprintf("records/a/n%d.json.gz", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := reader.Get(ctx, "records/a/one.json.gz")
	if err != nil || string(got) != "first" {
		t.Fatalf("get: %q, %v; want first", got, err)
	}
	// Every page: 5 objects at 2 a page.
	before, err := reader.List(ctx, "records/")
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 5 {
		t.Fatalf("listing: %+v; want 5 records", before)
	}
	versions := map[string]string{}
	for _, o := range before {
		if o.Version == "" || o.Version == "0" || o.Size == 0 {
			t.Fatalf("listed %+v: no generation or size", o)
		}
		// When the store wrote it (updated): what bounds a record's age.
		if age := time.Since(o.Modified); o.Modified.IsZero() || age < -time.Minute || age > time.Minute {
			t.Fatalf("listed %+v: not written just now", o)
		}
		versions[o.Key] = o.Version
	}
	if err := agent.Put(ctx, "records/a/one.json.gz", []byte("second")); err != nil {
		t.Fatal(err)
	}
	after, err := reader.List(ctx, "records/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range after {
		changed := o.Version != versions[o.Key]
		if changed != (o.Key == "records/a/one.json.gz") {
			t.Errorf("%s: version %s, was %s: only the replaced record's may change", o.Key, o.Version, versions[o.Key])
		}
		if o.Key == "records/a/one.json.gz" && o.Size != int64(len("second")) {
			t.Errorf("%s: size %d, want %d", o.Key, o.Size, len("second"))
		}
	}
	if got, err := reader.Get(ctx, "records/a/one.json.gz"); err != nil || string(got) != "second" {
		t.Fatalf("get after the put: %q, %v; want second", got, err)
	}
	// Open reads the same bytes as they arrive, with the generation the
	// listing shows: what the reader remembers the record under.
	rc, version, err := reader.Open(ctx, "records/a/one.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(rc)
	rc.Close()
	listed := ""
	for _, o := range after {
		if o.Key == "records/a/one.json.gz" {
			listed = o.Version
		}
	}
	if err != nil || string(got) != "second" || version != listed {
		t.Fatalf("open after the put: %q version %q, %v; want second, version %q", got, version, err, listed)
	}
	if _, _, err := reader.Open(ctx, "records/a/none.json.gz"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("opening a missing record: %v; want not found", err)
	}

	if _, err := reader.Get(ctx, "records/a/none.json.gz"); !errors.Is(err, outcome.ErrNotFound) || errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("a missing record: %v; want not found", err)
	}
	// The agent may not write another cluster's record, nor may the
	// reader write at all; both are denied, and nothing is written.
	for _, c := range []*bucket.GCS{agent, reader} {
		if err := c.Put(ctx, "records/b/other.json.gz", []byte("forged")); !errors.Is(err, bucket.ErrDenied) {
			t.Fatalf("a put outside the grant: %v; want denied", err)
		}
	}
	if _, err := reader.Get(ctx, "records/b/other.json.gz"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("the refused put wrote something: %v", err)
	}
	stranger := gcsClient(t, srv, strangeSA, bucket.GCSOptions{})
	if _, err := stranger.Get(ctx, "records/a/one.json.gz"); !errors.Is(err, bucket.ErrDenied) || errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("a refused get: %v; want denied", err)
	}
	if _, err := stranger.List(ctx, "records/"); !errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("a refused list: %v; want denied", err)
	}

	// Get reads no more than MaxObject.
	small := gcsClient(t, srv, readerSA, bucket.GCSOptions{MaxObject: 4})
	if _, err := small.Get(ctx, "records/a/one.json.gz"); err == nil {
		t.Fatal("a get of 6 bytes with MaxObject 4 succeeded")
	}
	if got, err := small.Get(ctx, "records/a/n0.json.gz"); err != nil || !bytes.Equal(got, []byte("x")) {
		t.Fatalf("a small get: %q, %v", got, err)
	}
}

// A put declares its body's MD5, so GCS stores that body or nothing: a
// body changed on the way (here by a proxy) is refused, and the record it
// was replacing stands. Without the declared hash GCS would store it.
func TestGCSPutRefusesABodyChangedOnTheWay(t *testing.T) {
	srv := startGCS(t)
	ctx := context.Background()
	agent := gcsClient(t, srv, agentSA, bucket.GCSOptions{})
	if err := agent.Put(ctx, "records/a/one.json.gz", []byte("the record before")); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	direct := proxy.Director
	proxy.Director = func(r *http.Request) {
		direct(r)
		if r.Body == nil {
			return
		}
		b, _ := io.ReadAll(r.Body)
		b = bytes.ReplaceAll(b, []byte("the record after"), []byte("the record AFTER"))
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	key, err := srv.KeyFile(t.TempDir(), agentSA)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := bucket.NewGCS(ctx, bucket.GCSOptions{Bucket: "fleet", MaxAttempts: 1,
		Reach: gcpclient.Reach{Endpoint: front.URL + "/storage/v1/", CredentialsFile: key}})
	if err != nil {
		t.Fatal(err)
	}
	if err := changed.Put(ctx, "records/a/one.json.gz", []byte("the record after")); err == nil {
		t.Fatal("a put whose body changed on the way succeeded")
	}
	if got, err := agent.Get(ctx, "records/a/one.json.gz"); err != nil || string(got) != "the record before" {
		t.Fatalf("after a refused put: %q, %v; want the record it was replacing", got, err)
	}
}

// An agent killed mid-upload leaves the record it was replacing, whole:
// GCS makes an object visible only once its upload is complete.
func TestGCSPutCutOffLeavesTheRecord(t *testing.T) {
	srv := startGCS(t)
	ctx := context.Background()
	agent := gcsClient(t, srv, agentSA, bucket.GCSOptions{})
	if err := agent.Put(ctx, "records/a/one.json.gz", []byte("the record before")); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	body := "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"records/a/one.json.gz\"}\r\n--b\r\nContent-Type: application/gzip\r\n\r\n"
	fmt.Fprintf(conn, "POST /upload/storage/v1/b/fleet/o?uploadType=multipart HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer gcsserver-token/%s\r\nContent-Type: multipart/related; boundary=b\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, agentSA, len(body)+1000, body)
	conn.Write(bytes.Repeat([]byte{0x1f}, 100))
	conn.Close()
	time.Sleep(200 * time.Millisecond)
	if got, err := agent.Get(ctx, "records/a/one.json.gz"); err != nil || string(got) != "the record before" {
		t.Fatalf("after an upload cut off: %q, %v; want the record it was replacing", got, err)
	}
}
