package app

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// kubeFront serves the lists of a client-go fake clientset over HTTP, as a
// Kubernetes API server answers them (limit and continue included), so that
// the reclaim binary in its own process can read a benchmark's clusters.
// Paths it does not know answer 404 and are counted.
type kubeFront struct {
	cs *fake.Clientset

	mu      sync.Mutex
	unknown map[string]int
}

// kubeFrontKinds are the lists the collector reads: path -> resource and kind.
var kubeFrontKinds = map[string]struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
}{
	"/api/v1/pods":                      {schema.GroupVersionResource{Version: "v1", Resource: "pods"}, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}},
	"/api/v1/nodes":                     {schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, schema.GroupVersionKind{Version: "v1", Kind: "Node"}},
	"/api/v1/persistentvolumes":         {schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}},
	"/api/v1/persistentvolumeclaims":    {schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}},
	"/apis/apps/v1/deployments":         {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
	"/apis/apps/v1/replicasets":         {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}},
	"/apis/apps/v1/statefulsets":        {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}},
	"/apis/apps/v1/daemonsets":          {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}},
	"/apis/apps/v1/controllerrevisions": {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}},
	"/apis/batch/v1/jobs":               {schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}},
	"/apis/batch/v1/cronjobs":           {schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}},
}

func (f *kubeFront) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/apis/argoproj.io/v1alpha1/workflows" && req.Method == http.MethodGet {
		// Argo's CRD is installed, with no Workflow (as the in-process fake).
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"WorkflowList","apiVersion":"argoproj.io/v1alpha1","metadata":{"resourceVersion":"424242"},"items":[]}`))
		return
	}
	k, ok := kubeFrontKinds[req.URL.Path]
	if !ok || req.Method != http.MethodGet {
		f.mu.Lock()
		if f.unknown == nil {
			f.unknown = map[string]int{}
		}
		f.unknown[req.Method+" "+req.URL.Path]++
		f.mu.Unlock()
		eksStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
		return
	}
	obj, err := f.cs.Tracker().List(k.gvr, k.gvk, "")
	if err != nil {
		eksStatus(w, http.StatusInternalServerError, "InternalError", err.Error(), "")
		return
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		eksStatus(w, http.StatusInternalServerError, "InternalError", err.Error(), "")
		return
	}
	q := req.URL.Query()
	from, limit := 0, len(items)
	if s := q.Get("limit"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			limit = v
		}
	}
	if s := q.Get("continue"); s != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(s, "i"))
		if err != nil || v < 0 || v > len(items) {
			eksStatus(w, http.StatusBadRequest, "BadRequest", "invalid continue token", "")
			return
		}
		from = v
	}
	to := min(len(items), from+limit)
	buf := []byte(`{"kind":"` + k.gvk.Kind + `List","apiVersion":"` + k.gvk.GroupVersion().String() + `","metadata":{"resourceVersion":"424242"`)
	if to < len(items) {
		buf = append(buf, `,"continue":"i`+strconv.Itoa(to)+`"`...)
	}
	buf = append(buf, `},"items":[`...)
	for i, it := range items[from:to] {
		if i > 0 {
			buf = append(buf, ',')
		}
		b, err := json.Marshal(it)
		if err != nil {
			eksStatus(w, http.StatusInternalServerError, "InternalError", err.Error(), "")
			return
		}
		buf = append(buf, b...)
	}
	buf = append(buf, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(buf)
}

// unknownPaths are the requests the front could not answer.
func (f *kubeFront) unknownPaths() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for p, n := range f.unknown {
		out[p] = n
	}
	return out
}
