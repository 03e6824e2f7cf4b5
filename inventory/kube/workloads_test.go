package kube_test

// Workload collection against a real kube-apiserver (internal/testenv): what
// the apiserver stores, defaults and validates is what Collect reads.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
)

const (
	protectLabel = "reclaim.dev/protect"
	retentionKey = "reclaim.dev/retention"
)

var (
	envOnce sync.Once
	env     *testenv.Cluster
	envErr  error
)

// cluster is one kube-apiserver shared by this package's tests, started on
// first use. Tests keep to their own namespaces and node names.
func cluster(t *testing.T) *testenv.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a kube-apiserver")
	}
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		env, envErr = testenv.StartCluster(ctx, "kube-workloads", testenv.Options{})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		env.Stop()
	}
	os.Exit(code)
}

func suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// namespace creates a fresh namespace (never finalized: no controllers run).
func namespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}
}

func newJob(ns, name string, labels, annotations map[string]string, owner *metav1.OwnerReference) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}},
	}
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return j
}

func controllerRef(apiVersion, kind, name string, uid types.UID) *metav1.OwnerReference {
	t := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &t}
}

// utcPod and utcJob make times comparable with reflect.DeepEqual (the client decodes them
// in the local zone).
func utcPod(p inventory.Pod) inventory.Pod {
	p.Created, p.Finished = p.Created.UTC(), p.Finished.UTC()
	return p
}

// atMost reports whether resourceVersion a is at most b.
func atMost(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c <= 0
}

func utcJob(j inventory.Job) inventory.Job {
	j.Created, j.Finished = j.Created.UTC(), j.Finished.UTC()
	return j
}

func TestWorkloadsRealAPIServer(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	cs := c.Client
	ns := namespace(t, cs, "wl")
	sfx := suffix()
	t0 := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	ts := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	tsp := func(d time.Duration) *metav1.Time { v := ts(d); return &v }

	// CronJobs: limits unset (the apiserver defaults them to 3 and 1, as
	// Collect would) and set.
	cjUnset := must[*batchv1.CronJob](t)(cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}},
	}, metav1.CreateOptions{}))
	five, zero := int32(5), int32(0)
	cjSet := must[*batchv1.CronJob](t)(cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "hourly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", SuccessfulJobsHistoryLimit: &five, FailedJobsHistoryLimit: &zero,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}},
	}, metav1.CreateOptions{}))

	// Jobs. A Complete condition needs startTime and completionTime (and no
	// active pods) to pass status validation.
	ttl := int32(3600)
	complete := newJob(ns, "nightly-29000000", map[string]string{protectLabel: "true", "team": "data"}, map[string]string{retentionKey: "2h"},
		controllerRef("batch/v1", "CronJob", cjUnset.Name, cjUnset.UID))
	complete.Spec.TTLSecondsAfterFinished = &ttl
	complete = must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).Create(ctx, complete, metav1.CreateOptions{}))
	complete.Status = batchv1.JobStatus{StartTime: tsp(0), CompletionTime: tsp(time.Minute), Succeeded: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: ts(time.Minute)},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: ts(time.Minute)},
		}}
	complete = must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).UpdateStatus(ctx, complete, metav1.UpdateOptions{}))

	failed := must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).Create(ctx, newJob(ns, "failed", map[string]string{protectLabel: "no"}, nil, nil), metav1.CreateOptions{}))
	failed.Status = batchv1.JobStatus{StartTime: tsp(0), Failed: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: ts(2 * time.Minute), Reason: "BackoffLimitExceeded"},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: ts(3 * time.Minute), Reason: "BackoffLimitExceeded"},
		}}
	failed = must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).UpdateStatus(ctx, failed, metav1.UpdateOptions{}))

	// Running, controlled by something that is not a CronJob, and being deleted.
	running := newJob(ns, "running", nil, nil, controllerRef("argoproj.io/v1alpha1", "Workflow", "wf", "wf-uid"))
	running.Finalizers = []string{"example.com/hold"}
	running = must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).Create(ctx, running, metav1.CreateOptions{}))
	running.Status = batchv1.JobStatus{StartTime: tsp(0), Active: 2}
	running = must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).UpdateStatus(ctx, running, metav1.UpdateOptions{}))
	background := metav1.DeletePropagationBackground
	if err := cs.BatchV1().Jobs(ns).Delete(ctx, running.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cs.BatchV1().Jobs(ns).Patch(context.Background(), "running", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})

	// Pods.
	nodeA := "wl-node-a-" + sfx
	mkPod := func(p *corev1.Pod, status corev1.PodStatus) *corev1.Pod {
		t.Helper()
		p.Namespace = ns
		if p.Spec.Containers == nil {
			p.Spec = podSpec()
		}
		p = must[*corev1.Pod](t)(cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}))
		p.Status = status
		return must[*corev1.Pod](t)(cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}))
	}
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web", protectLabel: "true"},
		Annotations:     map[string]string{retentionKey: "24h"},
		OwnerReferences: []metav1.OwnerReference{*controllerRef("batch/v1", "Job", complete.Name, complete.UID)}}}
	web.Spec = podSpec()
	web.Spec.NodeName = nodeA
	web = mkPod(web, corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.10", HostIPs: []corev1.HostIP{{IP: "10.0.0.10"}},
		PodIP: "10.0.1.5", PodIPs: []corev1.PodIP{{IP: "10.0.1.5"}, {IP: "fd00::5"}}})

	host := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "host"}}
	host.Spec = podSpec()
	host.Spec.HostNetwork, host.Spec.NodeName = true, nodeA
	host = mkPod(host, corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.10", HostIPs: []corev1.HostIP{{IP: "10.0.0.10"}},
		PodIP: "10.0.0.10", PodIPs: []corev1.PodIP{{IP: "10.0.0.10"}}})

	// Only the legacy podIP: the apiserver fills podIPs from it.
	legacy := mkPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, corev1.PodStatus{Phase: corev1.PodPending, PodIP: "10.0.1.7"})

	done := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "done"}}
	done.Spec = podSpec()
	done.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	done.Spec.Containers = append(done.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
	term := func(d time.Duration, code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: ts(0), FinishedAt: ts(d)}}
	}
	done = mkPod(done, corev1.PodStatus{Phase: corev1.PodFailed, PodIP: "10.0.1.9", PodIPs: []corev1.PodIP{{IP: "10.0.1.9"}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", Image: "busybox", State: term(time.Minute, 0)}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", Image: "busybox", State: term(5*time.Minute, 1)},
			{Name: "sidecar", Image: "busybox", State: term(4*time.Minute, 0)},
		}})

	gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", Finalizers: []string{"example.com/hold"}}}
	gone = mkPod(gone, corev1.PodStatus{Phase: corev1.PodSucceeded})
	if err := cs.CoreV1().Pods(ns).Delete(ctx, gone.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cs.CoreV1().Pods(ns).Patch(context.Background(), "gone", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})

	// Nodes.
	mkNode := func(name, providerID string, addrs ...corev1.NodeAddress) {
		t.Helper()
		n := must[*corev1.Node](t)(cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.NodeSpec{ProviderID: providerID}}, metav1.CreateOptions{}))
		n.Status.Addresses = addrs
		must[*corev1.Node](t)(cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}))
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	mkNode(nodeA, "aws:///us-east-1a/i-0abc",
		corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.10"},
		corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "54.1.2.3"},
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: "ip-10-0-0-10.ec2.internal"})
	nodeB := "wl-node-b-" + sfx
	mkNode(nodeB, "gce://proj/us-east1-b/vm-1", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.128.0.4"})

	r := kube.Collect(ctx, "real", cs, c.Dynamic, kube.Options{
		Timeout: time.Minute, ProtectLabel: protectLabel, Workloads: true, RetentionAnnotation: retentionKey, Labels: true,
		Subnets: []string{"subnet-0a", "subnet-0b"},
	})
	if !r.Complete || !r.WorkloadsListed || len(r.Problems) != 0 {
		t.Fatalf("complete=%v listed=%v problems=%q", r.Complete, r.WorkloadsListed, r.Problems)
	}
	if !reflect.DeepEqual(r.Subnets, []string{"subnet-0a", "subnet-0b"}) {
		t.Fatalf("subnets %v", r.Subnets)
	}

	// CronJobs, in namespace/name order.
	var cjs []inventory.CronJob
	for _, cj := range r.CronJobs {
		if cj.Namespace == ns {
			cjs = append(cjs, cj)
		}
	}
	wantCJ := []inventory.CronJob{
		{Namespace: ns, Name: "hourly", UID: string(cjSet.UID), SuccessfulLimit: 5, FailedLimit: 0},
		{Namespace: ns, Name: "nightly", UID: string(cjUnset.UID), SuccessfulLimit: 3, FailedLimit: 1},
	}
	if !reflect.DeepEqual(cjs, wantCJ) {
		t.Fatalf("cronjobs\n got %+v\nwant %+v", cjs, wantCJ)
	}

	// Jobs.
	var jobs []inventory.Job
	for _, j := range r.Jobs {
		if j.Namespace == ns {
			// The version is the apiserver's resourceVersion, and the
			// listing's is at least every object's.
			live := must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).Get(ctx, j.Name, metav1.GetOptions{}))
			if j.Version != live.ResourceVersion || !atMost(j.Version, r.JobsVersion) {
				t.Fatalf("Job %s version %q, live %q, listing %q", j.Name, j.Version, live.ResourceVersion, r.JobsVersion)
			}
			j.Version = ""
			jobs = append(jobs, utcJob(j))
		}
	}
	wantJobs := []inventory.Job{
		// The opt-out label protects whatever its value (package optout).
		{Namespace: ns, Name: "failed", UID: string(failed.UID), Labels: map[string]string{protectLabel: "no"}, Protected: true,
			Created: failed.CreationTimestamp.UTC(), Status: "Failed", Finished: t0.Add(3 * time.Minute)},
		{Namespace: ns, Name: "nightly-29000000", UID: string(complete.UID), Labels: map[string]string{protectLabel: "true", "team": "data"},
			Protected: true, Retention: "2h", Created: complete.CreationTimestamp.UTC(), Status: "Complete", Finished: t0.Add(time.Minute),
			TTL: &ttl, CronJob: &inventory.Owner{Kind: "CronJob", Name: "nightly", UID: string(cjUnset.UID)}},
		// The apiserver gives a Job without labels its pod template's labels.
		{Namespace: ns, Name: "running", UID: string(running.UID), Labels: running.Labels, Created: running.CreationTimestamp.UTC(), Active: 2, Terminating: true},
	}
	if !reflect.DeepEqual(jobs, wantJobs) {
		t.Fatalf("jobs\n got %+v\nwant %+v", jobs, wantJobs)
	}
	if !jobs[0].Done() || !jobs[1].Done() || jobs[2].Done() {
		t.Fatalf("Done: %v %v %v", jobs[0].Done(), jobs[1].Done(), jobs[2].Done())
	}

	// Pods.
	var pods []inventory.Pod
	for _, p := range r.Pods {
		if p.Namespace == ns {
			live := must[*corev1.Pod](t)(cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{}))
			if p.Version != live.ResourceVersion || !atMost(p.Version, r.PodsVersion) {
				t.Fatalf("Pod %s version %q, live %q, listing %q", p.Name, p.Version, live.ResourceVersion, r.PodsVersion)
			}
			p.Version = ""
			pods = append(pods, utcPod(p))
		}
	}
	wantPods := []inventory.Pod{
		{Namespace: ns, Name: "done", UID: string(done.UID), Phase: "Failed", IPs: []string{"10.0.1.9"},
			Created: done.CreationTimestamp.UTC(), Finished: t0.Add(5 * time.Minute)},
		{Namespace: ns, Name: "gone", UID: string(gone.UID), Phase: "Succeeded", Created: gone.CreationTimestamp.UTC(), Terminating: true},
		// hostNetwork: the address is the node's, not the pod's.
		{Namespace: ns, Name: "host", UID: string(host.UID), Phase: "Running", Node: nodeA, Created: host.CreationTimestamp.UTC()},
		{Namespace: ns, Name: "legacy", UID: string(legacy.UID), Phase: "Pending", IPs: []string{"10.0.1.7"}, Created: legacy.CreationTimestamp.UTC()},
		{Namespace: ns, Name: "web", UID: string(web.UID), Labels: map[string]string{"app": "web", protectLabel: "true"}, Protected: true,
			Retention: "24h", Phase: "Running", IPs: []string{"10.0.1.5", "fd00::5"}, Node: nodeA, Created: web.CreationTimestamp.UTC(),
			Owner: &inventory.Owner{Kind: "Job", Name: complete.Name, UID: string(complete.UID)}},
	}
	if !reflect.DeepEqual(pods, wantPods) {
		t.Fatalf("pods\n got %+v\nwant %+v", pods, wantPods)
	}

	// Nodes.
	var nodes []inventory.Node
	for _, n := range r.Nodes {
		if strings.HasSuffix(n.Name, sfx) {
			nodes = append(nodes, n)
		}
	}
	wantNodes := []inventory.Node{
		{Name: nodeA, IPs: []string{"10.0.0.10"}, Instance: "i-0abc"},
		{Name: nodeB, IPs: []string{"10.128.0.4"}},
	}
	if !reflect.DeepEqual(nodes, wantNodes) {
		t.Fatalf("nodes\n got %+v\nwant %+v", nodes, wantNodes)
	}
}

// listCounter records the list requests a client makes, per path.
type listCounter struct {
	rt http.RoundTripper
	mu sync.Mutex
	// per path: the limit of each request, and how many carried a continue token
	limits    map[string][]int64
	continues map[string]int
}

func (c *listCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		q := req.URL.Query()
		if q.Has("limit") || q.Has("continue") || !strings.Contains(req.URL.Path[1:], "/namespaces/") {
			limit, _ := strconv.ParseInt(q.Get("limit"), 10, 64)
			c.mu.Lock()
			c.limits[req.URL.Path] = append(c.limits[req.URL.Path], limit)
			if q.Get("continue") != "" {
				c.continues[req.URL.Path]++
			}
			c.mu.Unlock()
		}
	}
	return c.rt.RoundTrip(req)
}

func TestWorkloadsPaginateRealAPIServer(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	cs := c.Client
	ns := namespace(t, cs, "wl-page")
	sfx := suffix()
	for i := range 5 {
		name := "job-" + strconv.Itoa(i)
		must[*batchv1.Job](t)(cs.BatchV1().Jobs(ns).Create(ctx, newJob(ns, name, nil, nil, nil), metav1.CreateOptions{}))
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-" + strconv.Itoa(i)}, Spec: podSpec()}
		must[*corev1.Pod](t)(cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}))
	}
	for i := range 3 {
		must[*batchv1.CronJob](t)(cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "cj-" + strconv.Itoa(i)},
			Spec: batchv1.CronJobSpec{Schedule: "@daily",
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}},
		}, metav1.CreateOptions{}))
		name := "wl-page-" + strconv.Itoa(i) + "-" + sfx
		must[*corev1.Node](t)(cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	// What the whole cluster holds (other tests' objects included).
	total := map[string]int{
		"/apis/batch/v1/jobs":     len(must[*batchv1.JobList](t)(cs.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})).Items),
		"/apis/batch/v1/cronjobs": len(must[*batchv1.CronJobList](t)(cs.BatchV1().CronJobs("").List(ctx, metav1.ListOptions{})).Items),
		"/api/v1/pods":            len(must[*corev1.PodList](t)(cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})).Items),
		"/api/v1/nodes":           len(must[*corev1.NodeList](t)(cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})).Items),
	}

	counter := &listCounter{limits: map[string][]int64{}, continues: map[string]int{}}
	cfg := rest.CopyConfig(c.Admin)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.rt = rt; return counter })
	client := must[*kubernetes.Clientset](t)(kubernetes.NewForConfig(cfg))

	// Images too: Jobs and CronJobs are then listed once, for both.
	const page = 2
	r := kube.Collect(ctx, "paged", client, c.Dynamic, kube.Options{PageSize: page, Timeout: time.Minute, Workloads: true, Images: true})
	if !r.Complete || !r.WorkloadsListed || !r.ImagesListed {
		t.Fatalf("complete=%v listed=%v images=%v problems=%q", r.Complete, r.WorkloadsListed, r.ImagesListed, r.Problems)
	}
	got := map[string]int{"/apis/batch/v1/jobs": len(r.Jobs), "/apis/batch/v1/cronjobs": len(r.CronJobs), "/api/v1/pods": len(r.Pods), "/api/v1/nodes": len(r.Nodes)}
	if !reflect.DeepEqual(got, total) {
		t.Fatalf("collected %v, cluster holds %v", got, total)
	}
	for path, n := range total {
		wantCalls := (n + page - 1) / page
		limits := counter.limits[path]
		if len(limits) != wantCalls || counter.continues[path] != wantCalls-1 {
			t.Errorf("%s: %d requests (%d with a continue token) for %d objects, want %d pages of %d", path, len(limits), counter.continues[path], n, wantCalls, page)
		}
		for _, l := range limits {
			if l != page {
				t.Errorf("%s: limit %d, want %d", path, l, page)
			}
		}
	}
	t.Logf("list requests per path: %v (with continue: %v)", counter.limits, counter.continues)
	// Sorted and each object once.
	seen := map[string]bool{}
	for i, p := range r.Pods {
		k := p.Namespace + "/" + p.Name
		if seen[k] {
			t.Fatalf("pod %s twice", k)
		}
		seen[k] = true
		if i > 0 && (r.Pods[i-1].Namespace > p.Namespace || r.Pods[i-1].Namespace == p.Namespace && r.Pods[i-1].Name >= p.Name) {
			t.Fatalf("pods not sorted at %d: %s after %s/%s", i, k, r.Pods[i-1].Namespace, r.Pods[i-1].Name)
		}
	}
	for i := 1; i < len(r.Jobs); i++ {
		a, b := r.Jobs[i-1], r.Jobs[i]
		if a.Namespace > b.Namespace || a.Namespace == b.Namespace && a.Name >= b.Name {
			t.Fatalf("jobs not sorted: %s/%s before %s/%s", a.Namespace, a.Name, b.Namespace, b.Name)
		}
	}
}

// Without list on nodes (and, at first, on jobs) the cluster is incomplete,
// and the problems name what to grant.
func TestWorkloadsForbiddenRealAPIServer(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	list := []string{"list"}
	if err := c.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{
		{Verbs: list, APIGroups: []string{""}, Resources: []string{"persistentvolumes", "persistentvolumeclaims", "pods"}},
		{Verbs: list, APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}},
		{Verbs: list, APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}},
	}); err != nil {
		t.Fatal(err)
	}
	cs := must[*kubernetes.Clientset](t)(kubernetes.NewForConfig(c.Restricted()))
	dyn := must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(c.Restricted()))
	o := kube.Options{Timeout: time.Minute, Workloads: true}

	r := kube.Collect(ctx, "restricted", cs, dyn, o)
	want := []string{
		"list jobs.batch: forbidden — the service account needs list on jobs.batch (see deploy/base/rbac.yaml)",
		"list nodes: forbidden — the service account needs list on nodes (see deploy/base/rbac.yaml)",
	}
	if r.Complete || r.WorkloadsListed || !reflect.DeepEqual(r.Problems, want) {
		t.Fatalf("complete=%v listed=%v problems %q\nwant %q", r.Complete, r.WorkloadsListed, r.Problems, want)
	}

	if err := c.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{{Verbs: list, APIGroups: []string{"batch"}, Resources: []string{"jobs"}}}); err != nil {
		t.Fatal(err)
	}
	r = kube.Collect(ctx, "restricted", cs, dyn, o)
	if r.Complete || r.WorkloadsListed || !reflect.DeepEqual(r.Problems, want[1:]) {
		t.Fatalf("complete=%v listed=%v problems %q\nwant %q", r.Complete, r.WorkloadsListed, r.Problems, want[1:])
	}

	if err := c.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{{Verbs: list, APIGroups: []string{""}, Resources: []string{"nodes"}}}); err != nil {
		t.Fatal(err)
	}
	r = kube.Collect(ctx, "restricted", cs, dyn, o)
	if !r.Complete || !r.WorkloadsListed || len(r.Problems) != 0 {
		t.Fatalf("with the grants: complete=%v listed=%v problems %q", r.Complete, r.WorkloadsListed, r.Problems)
	}
}

// Target.Workloads and Target.Subnets reach Collect through CollectAll.
func TestWorkloadsTargetRealAPIServer(t *testing.T) {
	c := cluster(t)
	name := "wl-target-" + suffix()
	must[*corev1.Node](t)(c.Client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
	t.Cleanup(func() { _ = c.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	targets := []kube.Target{
		{Name: "on", Kubeconfig: c.Kubeconfig, Context: "admin", Workloads: true, Subnets: []string{"subnet-1"}},
		{Name: "off", Kubeconfig: c.Kubeconfig, Context: "admin"},
		{Name: "broken", Kubeconfig: c.Kubeconfig, Context: "missing", Workloads: true, Subnets: []string{"subnet-2"}},
	}
	rs := kube.CollectAll(context.Background(), targets, kube.Options{Timeout: time.Minute, Subnets: []string{"subnet-default"}}, 2)
	if on := rs[0]; !on.Complete || !on.WorkloadsListed || len(on.Nodes) == 0 || !reflect.DeepEqual(on.Subnets, []string{"subnet-1"}) {
		t.Fatalf("on: complete=%v listed=%v nodes=%d subnets=%v problems=%q", on.Complete, on.WorkloadsListed, len(on.Nodes), on.Subnets, on.Problems)
	}
	if off := rs[1]; !off.Complete || off.WorkloadsListed || off.Pods != nil || !reflect.DeepEqual(off.Subnets, []string{"subnet-default"}) {
		t.Fatalf("off: complete=%v listed=%v pods=%d subnets=%v", off.Complete, off.WorkloadsListed, len(off.Pods), off.Subnets)
	}
	if b := rs[2]; b.Complete || b.WorkloadsListed || !reflect.DeepEqual(b.Subnets, []string{"subnet-2"}) || len(b.Problems) != 1 {
		t.Fatalf("broken: %+v", b)
	}
}
