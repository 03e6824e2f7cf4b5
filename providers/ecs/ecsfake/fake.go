// Package ecsfake is a wire-level fake of the ECS API (AWS JSON 1.1: POST /
// with X-Amz-Target AmazonEC2ContainerServiceV20141113.<Operation>) for the
// calls that read which images ECS runs: ListTaskDefinitions,
// DescribeTaskDefinition, ListClusters, ListTasks, DescribeTasks,
// ListServices and DescribeServices. It paginates with nextToken, answers the real error shapes ({"__type",
// "message"}), checks the SigV4 scope, and injects throttling, denial,
// server errors and latency; driven by the real SDK client.
package ecsfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, the keys of Calls: the client's names of them.
const (
	OpListTaskDefinitions    = ecs.OpListTaskDefinitions
	OpDescribeTaskDefinition = ecs.OpDescribeTaskDefinition
	OpListClusters           = ecs.OpListClusters
	OpListTasks              = ecs.OpListTasks
	OpDescribeTasks          = ecs.OpDescribeTasks
	OpListServices           = ecs.OpListServices
	OpDescribeServices       = ecs.OpDescribeServices
)

const targetPrefix = "AmazonEC2ContainerServiceV20141113."

// Container is one container of a task definition or a task.
type Container struct {
	Name, Image string
	// ImageDigest is what a running task's container resolved (tasks only).
	ImageDigest string
}

// TaskDefinition is one revision of a family. ListTaskDefinitions lists it
// by its Status; DescribeTaskDefinition describes it whatever its Status.
type TaskDefinition struct {
	Family     string
	Revision   int
	Status     string // ACTIVE (default), INACTIVE or DELETE_IN_PROGRESS
	Containers []Container
}

// Task is one task of a cluster.
type Task struct {
	Cluster, ID string
	// DesiredStatus is RUNNING (default) or STOPPED.
	DesiredStatus  string
	TaskDefinition string // ARN
	Containers     []Container
}

// Service is one service of a cluster.
type Service struct {
	Cluster, Name  string
	TaskDefinition string // ARN
	// Deployments are the task definition ARNs of its deployments, answered
	// in order: the first PRIMARY, the others ACTIVE (draining). A real
	// service of the ECS controller has its TaskDefinition's first.
	Deployments []string
	// TaskSets are the task definition ARNs of its task sets (CODE_DEPLOY
	// and EXTERNAL controllers, whose Deployments are empty): the first
	// PRIMARY, the others ACTIVE.
	TaskSets     []string
	DesiredCount int
}

// Options configure the fake.
type Options = fakeapi.AWSOptions

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	fakeapi.Faults
	o        Options
	mu       sync.Mutex
	defs     map[string]TaskDefinition // by ARN
	tasks    map[string]Task           // by ARN
	services map[string]Service        // by ARN
	clusters map[string]bool           // by ARN
	vanish   map[string]bool           // task definition ARN -> deregistered when described
	refuse   map[string]string         // task or service ARN -> a failure reason DescribeTasks or DescribeServices gives for it
}

// New returns an empty fake; Start serves it.
func New(o Options) *Server {
	return &Server{o: o.WithDefaults(), defs: map[string]TaskDefinition{}, tasks: map[string]Task{}, services: map[string]Service{},
		clusters: map[string]bool{}, vanish: map[string]bool{}, refuse: map[string]string{}}
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// TaskDefinitionARN is the ARN of a family's revision.
func (s *Server) TaskDefinitionARN(family string, revision int) string {
	return fmt.Sprintf("arn:aws:ecs:%s:%s:task-definition/%s:%d", s.o.Region, s.o.Account, family, revision)
}

func (s *Server) clusterARN(name string) string {
	return fmt.Sprintf("arn:aws:ecs:%s:%s:cluster/%s", s.o.Region, s.o.Account, name)
}

// ServiceARN is the ARN of a cluster's service (the long format).
func (s *Server) ServiceARN(cluster, name string) string {
	return fmt.Sprintf("arn:aws:ecs:%s:%s:service/%s/%s", s.o.Region, s.o.Account, cluster, name)
}

// AddTaskDefinition registers task definitions; it returns the last one's ARN.
func (s *Server) AddTaskDefinition(ds ...TaskDefinition) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	arn := ""
	for _, d := range ds {
		if d.Status == "" {
			d.Status = "ACTIVE"
		}
		arn = s.TaskDefinitionARN(d.Family, d.Revision)
		s.defs[arn] = d
	}
	return arn
}

// AddCluster adds an empty cluster.
func (s *Server) AddCluster(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusters[s.clusterARN(name)] = true
}

// AddTask adds tasks, and their clusters.
func (s *Server) AddTask(ts ...Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		if t.DesiredStatus == "" {
			t.DesiredStatus = "RUNNING"
		}
		s.clusters[s.clusterARN(t.Cluster)] = true
		s.tasks[fmt.Sprintf("arn:aws:ecs:%s:%s:task/%s/%s", s.o.Region, s.o.Account, t.Cluster, t.ID)] = t
	}
}

// AddService adds services, and their clusters.
func (s *Server) AddService(vs ...Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		s.clusters[s.clusterARN(v.Cluster)] = true
		s.services[s.ServiceARN(v.Cluster, v.Name)] = v
	}
}

// RefuseDescribeService lists the service, but DescribeServices answers it
// with a failure of reason (MISSING: deleted since the list), not the
// service.
func (s *Server) RefuseDescribeService(cluster, name, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[s.ServiceARN(cluster, name)] = reason
}

// RefuseDescribe lists the task, but DescribeTasks answers it with a
// failure of reason (ECS's failures[]: ACCESS_DENIED, an internal error),
// not the task.
func (s *Server) RefuseDescribe(cluster, id, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[fmt.Sprintf("arn:aws:ecs:%s:%s:task/%s/%s", s.o.Region, s.o.Account, cluster, id)] = reason
}

// DeregisterOnDescribe lists the task definition but answers, when it is
// described, as for one deleted in between.
func (s *Server) DeregisterOnDescribe(arn string) { s.mu.Lock(); s.vanish[arn] = true; s.mu.Unlock() }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	if r.Method != http.MethodPost || !ok {
		writeErr(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+r.Header.Get("X-Amz-Target"))
		return
	}
	s.Count(op, false)
	fakeapi.Saw(Permission(op))
	if !fakeapi.Delay(r.Context(), s.o.Latency) {
		return
	}
	if region, service, ok := fakeapi.SigV4Scope(r.Header.Get("Authorization")); !ok || service != "ecs" || region != s.o.Region {
		writeErr(w, http.StatusBadRequest, "InvalidSignatureException", fmt.Sprintf("credential scope %s/%s, want %s/ecs", region, service, s.o.Region))
		return
	}
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	denied, throttled, failed := s.Take(op)
	switch {
	case denied:
		writeErr(w, http.StatusBadRequest, "AccessDeniedException", "User: arn:aws:sts::"+s.o.Account+":assumed-role/reclaim/reclaim is not authorized to perform: ecs:"+op+" on resource: *")
		return
	case throttled:
		writeErr(w, http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
		return
	case failed:
		writeErr(w, http.StatusInternalServerError, "ServerException", "Service Unavailable. Please try again later.")
		return
	}
	str := func(k string) string { v, _ := in[k].(string); return v }
	switch op {
	case OpListTaskDefinitions:
		status := str("status")
		if status == "" {
			status = "ACTIVE"
		}
		s.page(w, in, "taskDefinitionArns", 100, func() []string {
			var out []string
			for arn, d := range s.defs {
				if d.Status == status {
					out = append(out, arn)
				}
			}
			return out
		})
	case OpDescribeTaskDefinition:
		s.describeTaskDefinition(w, str("taskDefinition"))
	case OpListClusters:
		s.page(w, in, "clusterArns", 100, func() []string {
			var out []string
			for arn := range s.clusters {
				out = append(out, arn)
			}
			return out
		})
	case OpListTasks:
		cluster := s.resolveCluster(str("cluster"))
		want := str("desiredStatus")
		if want == "" {
			want = "RUNNING"
		}
		if !s.knownCluster(w, cluster) {
			return
		}
		s.page(w, in, "taskArns", 100, func() []string {
			var out []string
			for arn, t := range s.tasks {
				if s.clusterARN(t.Cluster) == cluster && t.DesiredStatus == want {
					out = append(out, arn)
				}
			}
			return out
		})
	case OpDescribeTasks:
		s.describeTasks(w, s.resolveCluster(str("cluster")), in["tasks"])
	case OpListServices:
		cluster := s.resolveCluster(str("cluster"))
		if !s.knownCluster(w, cluster) {
			return
		}
		s.page(w, in, "serviceArns", 10, func() []string { // ECS's default page is 10 here
			var out []string
			for arn, v := range s.services {
				if s.clusterARN(v.Cluster) == cluster {
					out = append(out, arn)
				}
			}
			return out
		})
	case OpDescribeServices:
		cluster := s.resolveCluster(str("cluster"))
		if !s.knownCluster(w, cluster) {
			return
		}
		s.describeServices(w, cluster, in["services"])
	default:
		writeErr(w, http.StatusBadRequest, "UnknownOperationException", "unsupported operation "+op)
	}
}

// knownCluster answers ClusterNotFoundException for an unknown cluster.
func (s *Server) knownCluster(w http.ResponseWriter, cluster string) bool {
	s.mu.Lock()
	known := s.clusters[cluster]
	s.mu.Unlock()
	if !known {
		writeErr(w, http.StatusBadRequest, "ClusterNotFoundException", "Cluster not found.")
	}
	return known
}

func (s *Server) resolveCluster(c string) string {
	if c == "" {
		c = "default"
	}
	if strings.HasPrefix(c, "arn:") {
		return c
	}
	return s.clusterARN(c)
}

// page answers a list operation: maxResults 1 to 100 (def when absent),
// nextToken an offset.
func (s *Server) page(w http.ResponseWriter, in map[string]any, field string, def int, all func() []string) {
	max := def
	if v, ok := in["maxResults"].(float64); ok {
		if v < 1 || v > 100 {
			writeErr(w, http.StatusBadRequest, "InvalidParameterException", "maxResults must be between 1 and 100")
			return
		}
		max = int(v)
	}
	s.mu.Lock()
	items := all()
	s.mu.Unlock()
	sort.Strings(items)
	token, _ := in["nextToken"].(string)
	page, next, ok := fakeapi.Page(items, max, token, "page-")
	if !ok {
		writeErr(w, http.StatusBadRequest, "InvalidParameterException", "Invalid token")
		return
	}
	out := map[string]any{field: page}
	if next != "" {
		out["nextToken"] = next
	}
	writeJSON(w, out)
}

func (s *Server) describeTaskDefinition(w http.ResponseWriter, ref string) {
	s.mu.Lock()
	arn := ref
	if !strings.HasPrefix(ref, "arn:") {
		arn = fmt.Sprintf("arn:aws:ecs:%s:%s:task-definition/%s", s.o.Region, s.o.Account, ref)
	}
	d, ok := s.defs[arn]
	gone := s.vanish[arn]
	s.mu.Unlock()
	if !ok || gone {
		writeErr(w, http.StatusBadRequest, "ClientException", "Unable to describe task definition.")
		return
	}
	cds := []map[string]any{}
	for _, c := range d.Containers {
		cds = append(cds, map[string]any{"name": c.Name, "image": c.Image, "essential": true})
	}
	writeJSON(w, map[string]any{"taskDefinition": map[string]any{"taskDefinitionArn": arn, "family": d.Family,
		"revision": d.Revision, "status": d.Status, "containerDefinitions": cds}})
}

func (s *Server) describeTasks(w http.ResponseWriter, cluster string, raw any) {
	list, _ := raw.([]any)
	if len(list) == 0 || len(list) > 100 {
		writeErr(w, http.StatusBadRequest, "InvalidParameterException", "Tasks cannot be empty and can contain at most 100 items.")
		return
	}
	tasks, failures := []map[string]any{}, []map[string]any{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range list {
		arn, _ := v.(string)
		t, ok := s.tasks[arn]
		if reason := s.refuse[arn]; ok && reason != "" {
			failures = append(failures, map[string]any{"arn": arn, "reason": reason, "detail": "injected by the fake"})
			continue
		}
		if !ok || s.clusterARN(t.Cluster) != cluster {
			failures = append(failures, map[string]any{"arn": arn, "reason": "MISSING"})
			continue
		}
		cs := []map[string]any{}
		for _, c := range t.Containers {
			m := map[string]any{"name": c.Name, "image": c.Image, "lastStatus": "RUNNING", "taskArn": arn}
			if c.ImageDigest != "" {
				m["imageDigest"] = c.ImageDigest
			}
			cs = append(cs, m)
		}
		tasks = append(tasks, map[string]any{"taskArn": arn, "clusterArn": cluster, "lastStatus": t.DesiredStatus,
			"desiredStatus": t.DesiredStatus, "taskDefinitionArn": t.TaskDefinition, "launchType": "FARGATE", "containers": cs})
	}
	writeJSON(w, map[string]any{"tasks": tasks, "failures": failures})
}

// describeServices answers services by ARN or name; one not in the cluster
// is a MISSING failure, as in ECS.
func (s *Server) describeServices(w http.ResponseWriter, cluster string, raw any) {
	list, _ := raw.([]any)
	if len(list) == 0 || len(list) > 10 {
		writeErr(w, http.StatusBadRequest, "InvalidParameterException", "Services cannot be empty and can contain at most 10 items.")
		return
	}
	services, failures := []map[string]any{}, []map[string]any{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range list {
		arn, _ := x.(string)
		if !strings.HasPrefix(arn, "arn:") {
			arn = s.ServiceARN(cluster[strings.LastIndexByte(cluster, '/')+1:], arn)
		}
		v, ok := s.services[arn]
		if reason := s.refuse[arn]; ok && reason != "" {
			failures = append(failures, map[string]any{"arn": arn, "reason": reason, "detail": "injected by the fake"})
			continue
		}
		if !ok || s.clusterARN(v.Cluster) != cluster {
			failures = append(failures, map[string]any{"arn": arn, "reason": "MISSING"})
			continue
		}
		status := func(i int) string {
			if i == 0 {
				return "PRIMARY"
			}
			return "ACTIVE"
		}
		deps := []map[string]any{}
		for i, td := range v.Deployments {
			deps = append(deps, map[string]any{"id": fmt.Sprintf("ecs-svc/%019d", i+1), "status": status(i), "taskDefinition": td,
				"desiredCount": v.DesiredCount, "runningCount": v.DesiredCount, "pendingCount": 0, "launchType": "FARGATE"})
		}
		sets := []map[string]any{}
		for i, td := range v.TaskSets {
			id := fmt.Sprintf("ecs-svc/%019d", i+1)
			sets = append(sets, map[string]any{"id": id, "taskSetArn": fmt.Sprintf("arn:aws:ecs:%s:%s:task-set/%s/%s/%s", s.o.Region, s.o.Account, v.Cluster, v.Name, id),
				"serviceArn": arn, "clusterArn": cluster, "status": status(i), "taskDefinition": td, "launchType": "FARGATE"})
		}
		m := map[string]any{"serviceArn": arn, "serviceName": v.Name, "clusterArn": cluster, "status": "ACTIVE",
			"desiredCount": v.DesiredCount, "runningCount": v.DesiredCount, "pendingCount": 0, "launchType": "FARGATE",
			"deployments": deps, "taskSets": sets}
		if v.TaskDefinition != "" {
			m["taskDefinition"] = v.TaskDefinition
		}
		services = append(services, m)
	}
	writeJSON(w, map[string]any{"services": services, "failures": failures})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.ecs#" + code, "message": msg})
}
