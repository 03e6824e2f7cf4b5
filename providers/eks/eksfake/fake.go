// Package eksfake is a wire-level fake of the EKS API (REST-JSON) for
// ListClusters and DescribeCluster, driven by the real SDK client through its
// BaseEndpoint: pagination with nextToken, the real error shapes
// (X-Amzn-Errortype with a JSON message), a SigV4 scope check, throttling,
// fault injection, latency and call counters.
package eksfake

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, the keys of Calls.
const (
	OpListClusters    = "ListClusters"
	OpDescribeCluster = "DescribeCluster"
)

// Cluster is one cluster of the fake.
type Cluster struct {
	Name     string
	Endpoint string
	CAData   []byte // PEM; sent base64 as EKS does
	VPC      string
	Subnets  []string
	Tags     map[string]string
	Status   string // default ACTIVE
	Version  string // default 1.31
	// Created is createdAt, sent as EKS does: epoch seconds, a JSON
	// number with a fraction. Default 2023-11-14T22:13:20Z.
	Created time.Time
}

// Options configure the fake.
type Options = fakeapi.AWSOptions

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	o        Options
	mu       sync.Mutex
	clusters map[string]Cluster
	// faults
	throttle     int            // the next n calls answer ThrottlingException
	denied       bool           // every call answers AccessDeniedException
	failDescribe map[string]int // cluster -> describe calls left to fail with 500
	goneOnDesc   map[string]bool
}

// New returns a fake with no clusters; Start serves it.
func New(o Options) *Server {
	return &Server{o: o.WithDefaults(), clusters: map[string]Cluster{}, failDescribe: map[string]int{}, goneOnDesc: map[string]bool{}}
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// Add adds or replaces clusters.
func (s *Server) Add(cs ...Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		s.clusters[c.Name] = c
	}
}

// ThrottleNext makes the next n calls answer ThrottlingException (429).
func (s *Server) ThrottleNext(n int) { s.mu.Lock(); s.throttle = n; s.mu.Unlock() }

// Deny makes every call answer AccessDeniedException (403), or stops it.
func (s *Server) Deny(on bool) { s.mu.Lock(); s.denied = on; s.mu.Unlock() }

// FailDescribe makes the next n DescribeCluster calls of a cluster fail (500).
func (s *Server) FailDescribe(cluster string, n int) {
	s.mu.Lock()
	s.failDescribe[cluster] = n
	s.mu.Unlock()
}

// DeleteOnDescribe lists the cluster but answers ResourceNotFoundException
// when it is described: deleted in between.
func (s *Server) DeleteOnDescribe(cluster string) {
	s.mu.Lock()
	s.goneOnDesc[cluster] = true
	s.mu.Unlock()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := OpDescribeCluster
	if r.URL.Path == "/clusters" || r.URL.Path == "/clusters/" {
		op = OpListClusters
	}
	s.Count(op, false)
	fakeapi.Saw(Permission(op))
	if !fakeapi.Delay(r.Context(), s.o.Latency) {
		return
	}
	if region, service, ok := fakeapi.SigV4Scope(r.Header.Get("Authorization")); !ok || service != "eks" || region != s.o.Region {
		fakeapi.WriteError(w, http.StatusForbidden, "InvalidSignatureException", fmt.Sprintf("credential scope %s/%s, want %s/eks", region, service, s.o.Region))
		return
	}
	if r.Method != http.MethodGet {
		fakeapi.WriteError(w, http.StatusBadRequest, "InvalidRequestException", "unsupported method "+r.Method)
		return
	}
	s.mu.Lock()
	throttled, denied := s.throttle > 0, s.denied
	if throttled {
		s.throttle--
	}
	s.mu.Unlock()
	switch {
	case denied:
		fakeapi.WriteError(w, http.StatusForbidden, "AccessDeniedException", "User: arn:aws:sts::"+s.o.Account+":assumed-role/reclaim/reclaim is not authorized to perform: eks:"+op)
		return
	case throttled:
		fakeapi.WriteError(w, http.StatusTooManyRequests, "ThrottlingException", "Rate exceeded")
		return
	}
	if op == OpListClusters {
		s.list(w, r.URL.Query())
		return
	}
	name, _ := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/clusters/"))
	s.describe(w, name)
}

func (s *Server) list(w http.ResponseWriter, q url.Values) {
	max := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			fakeapi.WriteError(w, http.StatusBadRequest, "InvalidParameterException", "maxResults must be 1 to 100")
			return
		}
		max = n
	}
	s.mu.Lock()
	names := make([]string, 0, len(s.clusters))
	for n := range s.clusters {
		names = append(names, n)
	}
	s.mu.Unlock()
	sort.Strings(names)
	page, next, ok := fakeapi.Page(names, max, q.Get("nextToken"), "page-")
	if !ok {
		fakeapi.WriteError(w, http.StatusBadRequest, "InvalidParameterException", "invalid nextToken")
		return
	}
	out := map[string]any{"clusters": page}
	if next != "" {
		out["nextToken"] = next
	}
	fakeapi.WriteJSON(w, out)
}

func (s *Server) describe(w http.ResponseWriter, name string) {
	s.mu.Lock()
	c, ok := s.clusters[name]
	gone := s.goneOnDesc[name]
	fail := s.failDescribe[name] > 0
	if fail {
		s.failDescribe[name]--
	}
	s.mu.Unlock()
	switch {
	case !ok || gone:
		fakeapi.WriteError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
		return
	case fail:
		fakeapi.WriteError(w, http.StatusInternalServerError, "ServerException", "internal error")
		return
	}
	status, version := c.Status, c.Version
	if status == "" {
		status = "ACTIVE"
	}
	if version == "" {
		version = "1.31"
	}
	created := 1.7e9
	if !c.Created.IsZero() {
		created = float64(c.Created.UnixMilli()) / 1000
	}
	tags := c.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	cl := map[string]any{
		"name": c.Name, "arn": fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", s.o.Region, s.o.Account, c.Name),
		"createdAt": created, "version": version, "status": status, "tags": tags,
		"roleArn":                 fmt.Sprintf("arn:aws:iam::%s:role/eks-cluster", s.o.Account),
		"resourcesVpcConfig":      map[string]any{"vpcId": c.VPC, "subnetIds": nonNil(c.Subnets), "securityGroupIds": []string{}, "endpointPublicAccess": true, "endpointPrivateAccess": false},
		"kubernetesNetworkConfig": map[string]any{"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4"},
		"platformVersion":         "eks.10",
	}
	if c.Endpoint != "" {
		cl["endpoint"] = c.Endpoint
	}
	if len(c.CAData) > 0 {
		cl["certificateAuthority"] = map[string]any{"data": base64.StdEncoding.EncodeToString(c.CAData)}
	}
	fakeapi.WriteJSON(w, map[string]any{"cluster": cl})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
