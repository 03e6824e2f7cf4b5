package bucket_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/gcpclient"
)

// giveUp is when a broken endpoint stops by itself (a last page), so that
// a lister that does not see it is broken gets a listing, not a hang.
const giveUp = 300

// brokenListings are endpoints that do not end their listing, by the page
// token they give after page n (1-based; the request's token is asked),
// and a good one. "" with more: a page that says more follow and gives no
// token.
var brokenListings = []struct {
	name  string
	token func(n int, asked string) (next string, more bool)
	want  string
}{
	{"a good listing of three pages", func(n int, _ string) (string, bool) { return fmt.Sprintf("tok-%d", n), n < 3 }, ""},
	{"the same token again", func(int, string) (string, bool) { return "tok-1", true }, "page 2 gave the page token page 1 gave"},
	{"the token it was asked", func(n int, asked string) (string, bool) {
		if asked == "" {
			return "tok-1", true
		}
		return asked, true
	}, "page 2 gave the page token page 1 gave"},
	{"a cycle of two tokens", func(n int, _ string) (string, bool) { return fmt.Sprintf("tok-%d", n%2), true }, "page 3 gave the page token page 1 gave"},
	{"a new token each page, without end", func(n int, _ string) (string, bool) { return fmt.Sprintf("tok-%d", n), true }, "100 pages of up to 1000 objects and more to come, more than the 100000 objects a records prefix holds"},
	{"more to come and no token", func(n int, _ string) (string, bool) { return "", true }, "page 1 says more follow but gives no token"},
}

// checkListing says whether a listing of an endpoint (pages requests)
// ended as c wants.
func checkListing(t *testing.T, want string, objs []bucket.Object, err error, pages int64) {
	t.Helper()
	if want == "" {
		if err != nil || len(objs) != 3 || pages != 3 {
			t.Fatalf("a good listing: %d objects in %d pages, %v", len(objs), pages, err)
		}
		return
	}
	if !errors.Is(err, bucket.ErrEndlessListing) || !strings.Contains(err.Error(), want) {
		t.Fatalf("listed %d objects in %d pages, error %v; want %s", len(objs), pages, err, want)
	}
	if objs != nil || pages > 100 {
		t.Fatalf("%d objects in %d pages: a listing that does not end is refused, within 100 pages", len(objs), pages)
	}
}

// An S3-compatible endpoint whose ListObjectsV2 does not end is a clear
// error, never a spin nor a listing cut short: the paginator alone would
// stop silently on a token given twice in a row, and on a truncated page
// without one, as if the listing were whole.
func TestS3ListStopsAnEndlessListing(t *testing.T) {
	for _, c := range brokenListings {
		t.Run(c.name, func(t *testing.T) {
			var pages atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("list-type") != "2" {
					http.Error(w, "not a ListObjectsV2", http.StatusBadRequest)
					return
				}
				n := int(pages.Add(1))
				asked := r.URL.Query().Get("continuation-token")
				next, more := c.token(n, asked)
				if n >= giveUp {
					more = false
				}
				w.Header().Set("Content-Type", "application/xml")
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>fleet</Name><Prefix>clusters/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>%t</IsTruncated>`, more)
				if asked != "" {
					fmt.Fprintf(w, "<ContinuationToken>%s</ContinuationToken>", asked)
				}
				if more && next != "" {
					fmt.Fprintf(w, "<NextContinuationToken>%s</NextContinuationToken>", next)
				}
				fmt.Fprintf(w, `<Contents><Key>clusters/c%d.json.gz</Key><LastModified>2026-11-27T10:00:00.000Z</LastModified><ETag>&quot;e%d&quot;</ETag><Size>10</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>`, n, n)
			}))
			defer srv.Close()
			cl, err := bucket.New(context.Background(), bucket.Options{Bucket: "fleet", PathStyle: true, Service: awsclient.Service{
				Account: owner, Region: "us-east-1", Endpoint: srv.URL, MaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")}})
			if err != nil {
				t.Fatal(err)
			}
			objs, err := cl.List(context.Background(), "clusters/")
			checkListing(t, c.want, objs, err, pages.Load())
			if err != nil && !strings.HasPrefix(err.Error(), "list s3://fleet/clusters/: the listing does not end: ") {
				t.Fatalf("the error does not say what was listed first: %v", err)
			}
		})
	}
}

// The same for GCS's objects.list, whose pages go on while a token comes
// back.
func TestGCSListStopsAnEndlessListing(t *testing.T) {
	for _, c := range brokenListings {
		if c.want != "" && strings.Contains(c.want, "no token") {
			continue // GCS says more follow by its token alone
		}
		t.Run(c.name, func(t *testing.T) {
			var pages atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/storage/v1/b/fleet/o" {
					http.Error(w, "not objects.list: "+r.URL.Path, http.StatusNotFound)
					return
				}
				n := int(pages.Add(1))
				next, more := c.token(n, r.URL.Query().Get("pageToken"))
				body := map[string]any{"kind": "storage#objects", "items": []map[string]any{
					{"kind": "storage#object", "name": fmt.Sprintf("clusters/c%d.json.gz", n), "bucket": "fleet", "generation": fmt.Sprint(1000 + n), "size": "10"}}}
				if more && n < giveUp {
					body["nextPageToken"] = next
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(body)
			}))
			defer srv.Close()
			cl, err := bucket.NewGCS(context.Background(), bucket.GCSOptions{Bucket: "fleet", MaxAttempts: 1,
				Reach: gcpclient.Reach{Endpoint: srv.URL + "/storage/v1/", WithoutAuthentication: true, UserAgent: "reclaim/test"}})
			if err != nil {
				t.Fatal(err)
			}
			objs, err := cl.List(context.Background(), "clusters/")
			checkListing(t, c.want, objs, err, pages.Load())
			if err != nil && !strings.HasPrefix(err.Error(), "list gs://fleet/clusters/: the listing does not end: ") {
				t.Fatalf("the error does not say what was listed first: %v", err)
			}
		})
	}
}
