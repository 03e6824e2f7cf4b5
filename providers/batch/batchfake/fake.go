// Package batchfake is a wire-level fake of the AWS Batch API (REST-JSON:
// POST /v1/describejobdefinitions with a JSON body) for the call that reads
// which images job definitions name: DescribeJobDefinitions. It filters by
// status and name, paginates with maxResults and nextToken, answers the
// real error shapes (X-Amzn-Errortype with {"message"}; ClientException,
// ServerException, AccessDeniedException 403, TooManyRequestsException
// 429), checks the SigV4 scope, and injects throttling, denial, server
// errors and latency; driven by the real SDK client.
package batchfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, the keys of Calls.
const OpDescribeJobDefinitions = "DescribeJobDefinitions"

const path = "/v1/describejobdefinitions"

// JobDefinition is one revision of a job definition. Each image list adds
// one place the images sit; the fake does not check that the combination
// is one Batch would register.
type JobDefinition struct {
	Name     string
	Revision int    // 1 when 0
	Status   string // ACTIVE (default) or INACTIVE
	// Image is containerProperties.image.
	Image string
	// NodeImages are the containers of nodeProperties.nodeRangeProperties,
	// one node range each.
	NodeImages []string
	// ECSImages are ecsProperties.taskProperties[0].containers.
	ECSImages []string
	// EKSImages are eksProperties.podProperties.containers.
	EKSImages []string
	// EKSInitImages are eksProperties.podProperties.initContainers.
	EKSInitImages []string
	// NodeECSImages and NodeEKSImages are a node range's ecsProperties and
	// eksProperties (multi-node on ECS or EKS), one node range each.
	NodeECSImages []string
	NodeEKSImages []string
}

// Options configure the fake.
type Options = fakeapi.AWSOptions

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	fakeapi.Faults
	o    Options
	mu   sync.Mutex
	defs map[string]JobDefinition // by name:revision
}

// New returns an empty fake; Start serves it.
func New(o Options) *Server {
	return &Server{o: o.WithDefaults(), defs: map[string]JobDefinition{}}
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// Add registers job definitions; one of the same name and revision is replaced.
func (s *Server) Add(ds ...JobDefinition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		if d.Revision == 0 {
			d.Revision = 1
		}
		if d.Status == "" {
			d.Status = "ACTIVE"
		}
		s.defs[fmt.Sprintf("%s:%d", d.Name, d.Revision)] = d
	}
}

// request is DescribeJobDefinitionsInput on the wire.
type request struct {
	JobDefinitionName string   `json:"jobDefinitionName"`
	JobDefinitions    []string `json:"jobDefinitions"`
	MaxResults        *int     `json:"maxResults"`
	NextToken         string   `json:"nextToken"`
	Status            string   `json:"status"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != path || r.Method != http.MethodPost {
		fakeapi.WriteError(w, http.StatusNotFound, "UnknownOperationException", "unsupported "+r.Method+" "+r.URL.Path)
		return
	}
	op := OpDescribeJobDefinitions
	s.Count(op, false)
	fakeapi.Saw(Permission(op))
	if !fakeapi.Delay(r.Context(), s.o.Latency) {
		return
	}
	if region, service, ok := fakeapi.SigV4Scope(r.Header.Get("Authorization")); !ok || service != "batch" || region != s.o.Region {
		fakeapi.WriteError(w, http.StatusForbidden, "InvalidSignatureException", fmt.Sprintf("credential scope %s/%s, want %s/batch", region, service, s.o.Region))
		return
	}
	var in request
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fakeapi.WriteError(w, http.StatusBadRequest, "ClientException", "Invalid request body: "+err.Error())
		return
	}
	denied, throttled, failed := s.Take(op)
	switch {
	case denied:
		fakeapi.WriteError(w, http.StatusForbidden, "AccessDeniedException", "User: arn:aws:sts::"+s.o.Account+":assumed-role/reclaim/reclaim is not authorized to perform: batch:"+op+" on resource: arn:aws:batch:"+s.o.Region+":"+s.o.Account+":*")
		return
	case throttled:
		fakeapi.WriteError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Too Many Requests")
		return
	case failed:
		fakeapi.WriteError(w, http.StatusInternalServerError, "ServerException", "Server error")
		return
	}
	if len(in.JobDefinitions) > 0 {
		fakeapi.WriteError(w, http.StatusBadRequest, "ClientException", "jobDefinitions is not supported by the fake")
		return
	}
	if in.Status != "" && in.Status != "ACTIVE" && in.Status != "INACTIVE" {
		fakeapi.WriteError(w, http.StatusBadRequest, "ClientException", "status must be ACTIVE or INACTIVE")
		return
	}
	max := 100
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 100 {
			fakeapi.WriteError(w, http.StatusBadRequest, "ClientException", "maxResults must be between 1 and 100")
			return
		}
		max = *in.MaxResults
	}
	s.mu.Lock()
	var defs []JobDefinition
	for _, d := range s.defs {
		if (in.Status == "" || d.Status == in.Status) && (in.JobDefinitionName == "" || d.Name == in.JobDefinitionName) {
			defs = append(defs, d)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(defs, func(a, b JobDefinition) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Revision, b.Revision))
	})
	page, next, ok := fakeapi.Page(defs, max, in.NextToken, "jd-")
	if !ok {
		fakeapi.WriteError(w, http.StatusBadRequest, "ClientException", "Invalid nextToken")
		return
	}
	items := make([]map[string]any, 0, len(page))
	for _, d := range page {
		items = append(items, s.wire(d))
	}
	out := map[string]any{"jobDefinitions": items}
	if next != "" {
		out["nextToken"] = next
	}
	fakeapi.WriteJSON(w, out)
}

// wire is the JobDefinition as DescribeJobDefinitions answers it.
func (s *Server) wire(d JobDefinition) map[string]any {
	m := map[string]any{
		"jobDefinitionName": d.Name,
		"jobDefinitionArn":  fmt.Sprintf("arn:aws:batch:%s:%s:job-definition/%s:%d", s.o.Region, s.o.Account, d.Name, d.Revision),
		"revision":          d.Revision,
		"status":            d.Status,
		"type":              "container",
	}
	if d.Image != "" {
		m["containerProperties"] = map[string]any{"image": d.Image, "command": []string{"run"},
			"resourceRequirements": []map[string]string{{"type": "VCPU", "value": "1"}, {"type": "MEMORY", "value": "2048"}}}
	}
	if len(d.ECSImages) > 0 {
		m["ecsProperties"] = ecsProperties(d.ECSImages)
	}
	if len(d.EKSImages)+len(d.EKSInitImages) > 0 {
		m["eksProperties"] = eksProperties(d.EKSImages, d.EKSInitImages)
		m["containerOrchestrationType"] = "EKS"
	}
	var ranges []map[string]any
	for _, img := range d.NodeImages {
		ranges = append(ranges, map[string]any{"container": map[string]any{"image": img}})
	}
	for _, img := range d.NodeECSImages {
		ranges = append(ranges, map[string]any{"ecsProperties": ecsProperties([]string{img})})
	}
	for _, img := range d.NodeEKSImages {
		ranges = append(ranges, map[string]any{"eksProperties": eksProperties([]string{img}, nil)})
	}
	if len(ranges) > 0 {
		for i, r := range ranges {
			r["targetNodes"] = strconv.Itoa(i)
		}
		ranges[len(ranges)-1]["targetNodes"] = strconv.Itoa(len(ranges)-1) + ":"
		m["type"] = "multinode"
		m["nodeProperties"] = map[string]any{"mainNode": 0, "numNodes": len(ranges), "nodeRangeProperties": ranges}
	}
	return m
}

func ecsProperties(images []string) map[string]any {
	cs := make([]map[string]any, len(images))
	for i, img := range images {
		cs[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": img, "essential": i == 0}
	}
	return map[string]any{"taskProperties": []map[string]any{{"containers": cs}}}
}

func eksProperties(images, inits []string) map[string]any {
	named := func(prefix string, images []string) []map[string]any {
		cs := make([]map[string]any, len(images))
		for i, img := range images {
			cs[i] = map[string]any{"name": fmt.Sprintf("%s%d", prefix, i), "image": img}
		}
		return cs
	}
	pod := map[string]any{"containers": named("c", images)}
	if len(inits) > 0 {
		pod["initContainers"] = named("init", inits)
	}
	return map[string]any{"podProperties": pod}
}
