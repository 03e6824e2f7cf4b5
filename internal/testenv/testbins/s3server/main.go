// Command s3server is the S3 the end-to-end tests publish cluster records
// to: gofakes3's S3 implementation (path-style, in memory), behind a small
// stand-in for IAM. With -policy, each access key may read and write only
// the key prefixes the policy grants it, as a bucket policy scoped per
// cluster would; a request without a granted key gets S3's 403
// AccessDenied. With -clock, the time it stamps on objects (LastModified)
// is the real time plus the offset the file holds, so that a test whose
// clock is simulated moves the store's with it. It prints its URL on the
// first line of its output.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// grant is what one access key may do, by object key prefix ("bucket/prefix").
type grant struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

var credential = regexp.MustCompile(`Credential=([^/,\s]+)/`)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	policyFile := flag.String("policy", "", "JSON file: access key -> {read: [bucket/prefix...], write: [...]}; without it every request is allowed")
	buckets := flag.String("buckets", "", "comma-separated buckets to create")
	clockFile := flag.String("clock", "", "file holding the offset (a Go duration) of the store's clock from the real one; none: the real time")
	flag.Parse()

	backend := s3mem.New(s3mem.WithTimeSource(offsetClock(*clockFile)))
	for _, b := range strings.Split(*buckets, ",") {
		if b != "" {
			if err := backend.CreateBucket(b); err != nil {
				log.Fatal(err)
			}
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
	s3 := gofakes3.New(backend, gofakes3.WithAutoBucket(false)).Server()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", l.Addr())
	log.Fatal(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if policy != nil && !allowed(policy, r) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>s3server</RequestId></Error>`)
			return
		}
		s3.ServeHTTP(w, r)
	})))
}

// allowed says whether the request's access key is granted what it asks:
// reading an object or listing under a prefix needs a read grant, writing
// or deleting an object a write grant.
func allowed(policy map[string]grant, r *http.Request) bool {
	m := credential.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return false
	}
	g, ok := policy[m[1]]
	if !ok {
		return false
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	target := bucket + "/" + key
	if key == "" { // a bucket operation: a listing under ?prefix=
		target = bucket + "/" + r.URL.Query().Get("prefix")
	}
	prefixes := g.Read
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		prefixes = g.Write
	}
	for _, p := range prefixes {
		if strings.HasPrefix(target, p) {
			return true
		}
	}
	return false
}

// offsetClock is the store's time: the real time plus the offset its file
// holds when read (no file: none). Only objects' times follow it; requests'
// signatures are checked against the real time, as the SDK signs them.
type offsetClock string

func (c offsetClock) Now() time.Time {
	now := time.Now()
	if c == "" {
		return now
	}
	raw, err := os.ReadFile(string(c))
	if err != nil {
		return now
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(raw)))
	if err != nil {
		log.Printf("clock %s: %v", c, err)
		return now
	}
	return now.Add(d)
}

func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
