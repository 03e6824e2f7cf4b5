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
	"net/url"
	"strings"
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

// A listing names every object under the prefix with the version a GET of
// it returns; a new put is a new version; Open reads the body as it
// arrives, with the version it read; a deleter without a grant on the
// prefix is denied the listing.
func TestBucketListAndOpen(t *testing.T) {
	ctx := context.Background()
	srv, err := testenv.StartS3(ctx, t.TempDir(), map[string]testenv.S3Grant{
		"AKIDAGENT":   {Write: []string{"fleet/clusters/"}, Read: []string{"fleet/clusters/"}},
		"AKIDDELETER": {Read: []string{"fleet/clusters/"}},
	}, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	agent, deleter, stranger := client(t, srv, "AKIDAGENT"), client(t, srv, "AKIDDELETER"), client(t, srv, "AKIDSTRANGER")
	for _, k := range []string{"clusters/a/one.json.gz", "clusters/b/two.json.gz"} {
		if err := agent.Put(ctx, k, []byte("record "+k)); err != nil {
			t.Fatal(err)
		}
	}
	list := func() map[string]bucket.Object {
		t.Helper()
		objs, err := deleter.List(ctx, "clusters/")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bucket.Object{}
		for _, o := range objs {
			out[o.Key] = o
		}
		return out
	}
	first := list()
	one := first["clusters/a/one.json.gz"]
	if len(first) != 2 || one.Version == "" || one.Size != int64(len("record clusters/a/one.json.gz")) {
		t.Fatalf("listing: %+v", first)
	}
	// When the store wrote it (LastModified): what bounds a record's age.
	if age := time.Since(one.Modified); one.Modified.IsZero() || age < -time.Minute || age > time.Minute {
		t.Fatalf("listed as written at %v, not just now", one.Modified)
	}
	body, version, err := deleter.Open(ctx, one.Key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(got) != "record clusters/a/one.json.gz" || version != one.Version {
		t.Fatalf("open: %q version %q (listed %q), %v", got, version, one.Version, err)
	}
	if err := agent.Put(ctx, one.Key, []byte("another record")); err != nil {
		t.Fatal(err)
	}
	if again := list()[one.Key]; again.Version == one.Version {
		t.Fatalf("a new put kept version %q", again.Version)
	}
	if _, _, err := deleter.Open(ctx, "clusters/c/none.json.gz"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("opening a missing record: %v", err)
	}
	if _, err := stranger.List(ctx, "clusters/"); !errors.Is(err, bucket.ErrDenied) {
		t.Fatalf("listing without a grant: %v", err)
	}
}

// A listing reads every page (S3 pages at 1,000 keys; this server at 2),
// and a page that fails fails the listing: never a shorter one.
func TestBucketListReadsEveryPage(t *testing.T) {
	keys := []string{"clusters/a", "clusters/b", "clusters/c", "clusters/d", "clusters/e"}
	failPage := -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("list-type") != "2" || r.Header.Get("X-Amz-Expected-Bucket-Owner") != owner {
			http.Error(w, "not a ListObjectsV2 naming the owner", http.StatusBadRequest)
			return
		}
		start := 0
		if tok := q.Get("continuation-token"); tok != "" {
			fmt.Sscan(tok, &start)
		}
		if start/2 == failPage {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
			return
		}
		end := min(start+2, len(keys))
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>fleet</Name><Prefix>clusters/</Prefix><KeyCount>%d</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>%v</IsTruncated>`, end-start, end < len(keys))
		for i, k := range keys[start:end] {
			fmt.Fprintf(&b, `<Contents><Key>%s</Key><ETag>&quot;v%d&quot;</ETag><Size>%d</Size></Contents>`, k, start+i, 100+start+i)
		}
		if end < len(keys) {
			fmt.Fprintf(&b, `<NextContinuationToken>%d</NextContinuationToken>`, end)
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, b.String())
	}))
	defer srv.Close()
	c, err := bucket.New(context.Background(), bucket.Options{Bucket: "fleet", PathStyle: true, Service: awsclient.Service{
		Account: owner, Region: "us-east-1", Endpoint: srv.URL, MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := c.List(context.Background(), "clusters/")
	if err != nil || len(objs) != len(keys) || objs[4].Key != "clusters/e" || objs[4].Version != `"v4"` || objs[4].Size != 104 {
		t.Fatalf("listing of 3 pages: %+v, %v", objs, err)
	}
	failPage = 1
	if objs, err := c.List(context.Background(), "clusters/"); err == nil || objs != nil {
		t.Fatalf("a failed second page: %d objects, %v; want an error", len(objs), err)
	}
}
