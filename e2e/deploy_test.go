package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
)

// deployVariant is one install of reclaim as a user would make it, rendered
// by deploy/test/render (kustomize's krusty, Helm's client-only install).
type deployVariant struct {
	name   string
	render []string // arguments of the render tool, run in deploy/test
	// What the install must grant, and nothing more.
	ns, sa, config, state, lease string // lease: "" without leader election
	deletePVCs, prometheusRule   bool
	deleteWorkloads              bool // components/workload-deleter, rbac.deleteWorkloads
	createNamespace              bool // helm: the chart does not create it (--create-namespace)
	// agent: reclaim agent (overlays/agent, the chart's mode agent), which
	// publishes its cluster's record; apply: its pod runs with --apply.
	agent, apply bool
}

var deployVariants = []deployVariant{
	{name: "kustomize-cronjob", render: []string{"kustomize", "../overlays/cronjob"},
		ns: "reclaim", sa: "reclaim", config: "reclaim-config", state: "reclaim-state"},
	{name: "kustomize-daemon", render: []string{"kustomize", "../overlays/daemon"},
		ns: "reclaim", sa: "reclaim", config: "reclaim-config", state: "reclaim-state", lease: "reclaim"},
	{name: "kustomize-components", render: []string{"kustomize", "testdata/kustomize-all"},
		ns: "reclaim", sa: "reclaim", config: "reclaim-config", state: "reclaim-state", deletePVCs: true, deleteWorkloads: true, prometheusRule: true},
	{name: "helm-cronjob", render: []string{"helm", "../helm/reclaim", "-n", "gc", "--name", "reclaim"},
		ns: "gc", sa: "reclaim", config: "reclaim-config", state: "reclaim-state", createNamespace: true},
	{name: "helm-daemon", render: []string{"helm", "../helm/reclaim", "-n", "gc", "--name", "cleanup",
		"--set", "mode=daemon", "--set", "rbac.deletePVCs=true", "--set", "rbac.deleteWorkloads=true", "--set", "prometheusRule.enabled=true"},
		ns: "gc", sa: "cleanup-reclaim", config: "cleanup-reclaim-config", state: "cleanup-reclaim-state", lease: "cleanup-reclaim",
		deletePVCs: true, deleteWorkloads: true, prometheusRule: true, createNamespace: true},
	// Agents: reads, its cluster's identity, its own state; deletes only
	// with --apply.
	{name: "kustomize-agent-apply", render: []string{"kustomize", "testdata/kustomize-agent-apply"},
		ns: "reclaim", sa: "reclaim-agent", config: "reclaim-agent-config", state: "reclaim-agent-state",
		deletePVCs: true, deleteWorkloads: true, agent: true, apply: true},
	{name: "helm-agent", render: []string{"helm", "../helm/reclaim", "-n", "gc", "--name", "agent",
		"--set", "mode=agent", "--set", "rbac.deletePVCs=true", "--set", "rbac.deleteWorkloads=true"},
		ns: "gc", sa: "agent-reclaim", config: "agent-reclaim-config", state: "agent-reclaim-state", createNamespace: true, agent: true},
}

// renderBin is deploy/test/render, built by TestDeploy.
var renderBin string

// buildRenderTool builds deploy/test/render (its own module: kustomize and
// Helm stay out of reclaim's go.mod) into a directory of t. The first build
// compiles Helm and kustomize (minutes; `make testbins` does it ahead); after
// that the build cache makes it a link.
// It is built once per test process, beside the reclaim binary: in one
// test's TempDir it would be gone for the next test.
func buildRenderTool(t *testing.T) string {
	t.Helper()
	dir := renderDir(t)
	renderBuild.Do(func() {
		bin := filepath.Join(binDir, "render")
		cmd := exec.Command("go", "build", "-o", bin, "./render")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			renderBuild.err = fmt.Errorf("building deploy/test/render: %v\n%s", err, b)
			return
		}
		renderBuild.path = bin
	})
	if renderBuild.err != nil {
		t.Fatal(renderBuild.err)
	}
	return renderBuild.path
}

var renderBuild struct {
	sync.Once
	path string
	err  error
}

func renderDir(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "test")
}

func renderDeploy(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(renderBin, args...)
	cmd.Dir = renderDir(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("render %s: decoding its output: %v", strings.Join(args, " "), err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	if len(objs) == 0 {
		t.Fatalf("render %s: no objects", strings.Join(args, " "))
	}
	return objs
}

func findObject(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// warnings collects the API server's warnings (deprecations, PodSecurity).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// applyObjects server-side applies objs with strict field validation, in an
// order kubectl would succeed with (namespaces, CRDs and classes first).
func applyObjects(t *testing.T, ctx context.Context, c *testenv.Cluster, objs []*unstructured.Unstructured) []string {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(c.Admin)
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	rank := func(o *unstructured.Unstructured) int {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition", "PriorityClass":
			return 0
		case "ServiceAccount", "ClusterRole", "Role", "ConfigMap":
			return 1
		}
		return 2
	}
	sorted := slices.Clone(objs)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	for _, o := range sorted {
		gvk := o.GroupVersionKind()
		// Discovery lists a new CRD's kind a little after the CRD is
		// served: reset the cached discovery and ask again until it does.
		var m *meta.RESTMapping
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			var err error
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				mapper.Reset()
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("%s %s: %v", gvk, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				t.Fatalf("%s %s: rendered without a namespace", gvk.Kind, o.GetName())
			}
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager: "reclaim-e2e", Force: ptr(true), FieldValidation: "Strict"}); err != nil {
			t.Fatalf("apply %s %s/%s: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

func ptr[T any](v T) *T { return &v }

// prometheusRuleCRD is a minimal stand-in for the Prometheus Operator's CRD:
// enough for the API server to accept (and store) a PrometheusRule.
func prometheusRuleCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "prometheusrules.monitoring.coreos.com"},
		"spec": map[string]any{
			"group": "monitoring.coreos.com",
			"names": map[string]any{"kind": "PrometheusRule", "listKind": "PrometheusRuleList", "plural": "prometheusrules", "singular": "prometheusrule"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}

// TestDeploy renders each install (the kustomize overlays, the Helm chart),
// applies it to its own real kube-apiserver, and then checks what the
// install's ServiceAccount can do: reclaim, run with a token of it, collects
// every source completely and writes its state; a SubjectAccessReview shows
// it cannot read Secrets nor delete anything its policy does not delete.
func TestDeploy(t *testing.T) {
	renderBin = buildRenderTool(t) // once, before the parallel subtests
	var (
		mu      sync.Mutex
		metrics = map[string]bool{}
	)
	t.Run("variants", func(t *testing.T) {
		for _, v := range deployVariants {
			t.Run(v.name, func(t *testing.T) {
				t.Parallel()
				for _, name := range testDeployVariant(t, v) {
					mu.Lock()
					metrics[name] = true
					mu.Unlock()
				}
			})
		}
	})
	t.Run("alert-rules", func(t *testing.T) {
		testAlertRules(t, metrics)
	})
}

// testDeployVariant returns the metric names the runs exported.
func testDeployVariant(t *testing.T, v deployVariant) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	objs := renderDeploy(t, v.render...)

	// What was rendered, before the API server sees it.
	cm := findObject(objs, "ConfigMap", v.config)
	if cm == nil {
		t.Fatalf("no ConfigMap %s rendered", v.config)
	}
	var workload *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CronJob" || o.GetKind() == "Deployment" {
			if workload != nil {
				t.Fatalf("two workloads rendered: %s and %s", workload.GetKind(), o.GetKind())
			}
			workload = o
		}
		if o.GetKind() == "Secret" {
			t.Errorf("the install ships a Secret %s: secrets must come from existing Secrets", o.GetName())
		}
		if o.GetKind() == "ConfigMap" && o.GetName() == v.state {
			t.Errorf("the install ships the state ConfigMap %s: re-applying it would reset every grace period", v.state)
		}
	}
	if workload == nil {
		t.Fatal("no CronJob or Deployment rendered")
	}
	checkWorkload(t, v, workload, objs)
	if got := hasKind(objs, "PrometheusRule"); got != v.prometheusRule {
		t.Errorf("PrometheusRule rendered: %v, want %v", got, v.prometheusRule)
	}

	// A cluster of its own: the installs share cluster-scoped names.
	c, err := testenv.StartCluster(ctx, "deploy-"+v.name, testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := c.InstallWorkflowCRD(ctx); err != nil {
		t.Fatal(err)
	}
	pre := []*unstructured.Unstructured{}
	if v.createNamespace { // helm install --create-namespace, labelled as deploy/base/namespace.yaml
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": v.ns, "labels": map[string]any{
				"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}}
		pre = append(pre, ns)
	}
	if v.prometheusRule {
		pre = append(pre, prometheusRuleCRD())
	}
	if len(pre) > 0 {
		applyObjects(t, ctx, c, pre)
		if v.prometheusRule {
			waitServed(t, ctx, c, schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"})
		}
	}
	// Strict validation rejects unknown fields; a pod template that breaks
	// the namespace's "restricted" Pod Security level comes back as a warning.
	if warns := applyObjects(t, ctx, c, objs); len(warns) > 0 {
		t.Errorf("applying the install: API server warnings:\n%s", strings.Join(warns, "\n"))
	}
	nsObj, err := c.Client.CoreV1().Namespaces().Get(ctx, v.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nsObj.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %s does not enforce the restricted Pod Security level: %v", v.ns, nsObj.Labels)
	}

	// A few things to collect, in another namespace.
	seedCluster(t, ctx, c, v.name)

	// The ServiceAccount's identity, as its pods get it (TokenRequest).
	tr, err := c.Client.CoreV1().ServiceAccounts(v.ns).CreateToken(ctx, v.sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", v.ns, v.sa, err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeTokenKubeconfig(t, kubeconfig, c, tr.Status.Token)

	checkAccess(t, ctx, c, v)

	// reclaim with the rendered config, reaching the cluster as the
	// ServiceAccount (a kubeconfig instead of inCluster: the test is not in a
	// pod), and the clouds' fakes.
	if v.agent {
		runDeployedAgent(t, ctx, c, v, cm, dir, kubeconfig)
		return nil
	}
	gce := gcefake.New(gcefake.Options{})
	t.Cleanup(gce.Close)
	ecr := ecrfake.New(ecrfake.Options{Region: ecrRegion})
	ecr.Start()
	t.Cleanup(ecr.Close)
	ecr.AddRepository(account, "shop/api", time.Now().Add(-30*24*time.Hour), nil)
	cfgPath := filepath.Join(dir, "reclaim.yaml")
	writeDeployedConfig(t, cm, cfgPath, kubeconfig, gce, ecr)

	prom := filepath.Join(dir, "reclaim.prom")
	cmd := reclaimCmd(ctx, t, testenv.CronJob, nil, "run", "--config", cfgPath, "-o", "json", "--metrics-textfile", prom)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 3 {
		t.Fatalf("reclaim run exited %d\nstderr:\n%s", code, stderr.Bytes())
	}
	if bytes.Contains(bytes.ToLower(stdout.Bytes()), []byte("forbidden")) || bytes.Contains(bytes.ToLower(stderr.Bytes()), []byte("forbidden")) {
		t.Errorf("reclaim's output mentions forbidden:\n%s\n%s", stdout.Bytes(), stderr.Bytes())
	}
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("reclaim's JSON report: %v\n%s", err, stdout.Bytes())
	}
	clusters := 0
	for _, s := range rep.Plan.Sources {
		if !s.Complete {
			t.Errorf("source %s %s incomplete: %v", s.Kind, s.Name, s.Problems)
		}
		if s.Kind == "cluster" {
			clusters++
			if s.Items == 0 {
				t.Errorf("cluster %s: nothing collected", s.Name)
			}
		}
	}
	if clusters == 0 {
		t.Errorf("no cluster among the sources: %+v", rep.Plan.Sources)
	}
	if code != 0 {
		t.Errorf("reclaim run exited %d with every source complete\nstderr:\n%s", code, stderr.Bytes())
	}
	// The state store is the install's ConfigMap, written with the SA's token.
	if _, err := c.Client.CoreV1().ConfigMaps(v.ns).Get(ctx, v.state, metav1.GetOptions{}); err != nil {
		t.Errorf("state ConfigMap %s/%s after the run: %v", v.ns, v.state, err)
	}
	names := metricNames(t, prom)

	if v.lease != "" {
		names = append(names, runDeployedDaemon(t, ctx, c, v, cfgPath)...)
	}
	return names
}

func hasKind(objs []*unstructured.Unstructured, kind string) bool {
	for _, o := range objs {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

func waitServed(t *testing.T, ctx context.Context, c *testenv.Cluster, gvr schema.GroupVersionResource) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s not served: %v", gvr, err)
	}
}

// checkWorkload checks the pod template: the rendered install's promises.
func checkWorkload(t *testing.T, v deployVariant, w *unstructured.Unstructured, objs []*unstructured.Unstructured) {
	t.Helper()
	podPath := []string{"spec", "template", "spec"}
	if w.GetKind() == "CronJob" {
		podPath = []string{"spec", "jobTemplate", "spec", "template", "spec"}
		for _, f := range [][]string{{"spec", "concurrencyPolicy"}, {"spec", "startingDeadlineSeconds"},
			{"spec", "jobTemplate", "spec", "ttlSecondsAfterFinished"}, {"spec", "jobTemplate", "spec", "backoffLimit"}} {
			if _, ok, _ := unstructured.NestedFieldNoCopy(w.Object, f...); !ok {
				t.Errorf("CronJob without %s", strings.Join(f, "."))
			}
		}
		if p, _, _ := unstructured.NestedString(w.Object, "spec", "concurrencyPolicy"); p != "Forbid" {
			t.Errorf("CronJob concurrencyPolicy %q, want Forbid", p)
		}
		if v.lease != "" {
			t.Errorf("a CronJob install with leader election")
		}
	} else {
		if v.lease == "" {
			t.Errorf("a Deployment install without leader election")
		}
		if r, _, _ := unstructured.NestedFieldNoCopy(w.Object, "spec", "replicas"); fmt.Sprint(r) != "2" {
			t.Errorf("Deployment replicas %v, want 2", r)
		}
		if !hasKind(objs, "PodDisruptionBudget") || !hasKind(objs, "Service") {
			t.Errorf("daemon install without a PodDisruptionBudget or a Service")
		}
	}
	pod, _, _ := unstructured.NestedMap(w.Object, podPath...)
	if pod["serviceAccountName"] != v.sa {
		t.Errorf("pod serviceAccountName %v, want %s", pod["serviceAccountName"], v.sa)
	}
	pc, _ := pod["priorityClassName"].(string)
	if pc == "" || findObject(objs, "PriorityClass", pc) == nil {
		t.Errorf("pod priorityClassName %q: not a PriorityClass of the install", pc)
	}
	containers, _ := pod["containers"].([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	ctr := containers[0].(map[string]any)
	args, _ := ctr["args"].([]any)
	if got := slices.Contains(args, any("--apply")); got != v.apply {
		t.Errorf("--apply in the pod's args: %v, want %v: %v", got, v.apply, args)
	}
	sub := map[string]string{"CronJob": "run", "Deployment": "daemon"}[w.GetKind()]
	if v.agent {
		sub = "agent"
	}
	if len(args) == 0 || args[0] != sub {
		t.Errorf("the pod runs %v, want reclaim %s", args, sub)
	}
	sc, _ := ctr["securityContext"].(map[string]any)
	if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false || sc["runAsNonRoot"] != true {
		t.Errorf("container securityContext %v", sc)
	}
	if drop, _, _ := unstructured.NestedStringSlice(sc, "capabilities", "drop"); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("capabilities.drop %v, want [ALL]", drop)
	}
	if p, _, _ := unstructured.NestedString(sc, "seccompProfile", "type"); p != "RuntimeDefault" {
		if p2, _, _ := unstructured.NestedString(pod, "securityContext", "seccompProfile", "type"); p2 != "RuntimeDefault" {
			t.Errorf("no RuntimeDefault seccompProfile")
		}
	}
	if _, ok, _ := unstructured.NestedMap(ctr, "resources", "requests"); !ok {
		t.Errorf("no resource requests")
	}
	if _, ok, _ := unstructured.NestedMap(ctr, "resources", "limits"); !ok {
		t.Errorf("no resource limits")
	}
	if w.GetKind() == "Deployment" {
		for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
			if p, _, _ := unstructured.NestedString(ctr, probe, "httpGet", "path"); p != path {
				t.Errorf("%s path %q, want %s", probe, p, path)
			}
		}
	}
	// The config comes from the install's ConfigMap.
	found := false
	vols, _ := pod["volumes"].([]any)
	for _, vol := range vols {
		if n, _, _ := unstructured.NestedString(vol.(map[string]any), "configMap", "name"); n == v.config {
			found = true
		}
	}
	if !found {
		t.Errorf("no volume from ConfigMap %s", v.config)
	}
}

// seedCluster creates a PV, a bound PVC, a pod mounting it and a Deployment
// (for image references) in namespace "apps".
func seedCluster(t *testing.T, ctx context.Context, c *testenv.Cluster, name string) {
	t.Helper()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "pd.csi.storage.gke.io", VolumeHandle: "projects/my-gke-project/zones/" + zoneA + "/disks/pvc-1"}},
			ClaimRef: &corev1.ObjectReference{Namespace: "apps", Name: "data"},
		}}
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "apps"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv.Name,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}
	if _, err := c.Client.CoreV1().PersistentVolumeClaims("apps").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	img := account + ".dkr.ecr." + ecrRegion + ".amazonaws.com/shop/api:v1"
	spec := podSpec(img)
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "apps"}, Spec: spec}
	if _, err := c.Client.CoreV1().Pods("apps").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func writeTokenKubeconfig(t *testing.T, path string, c *testenv.Cluster, token string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa"}
	cfg.CurrentContext = "sa"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// writeDeployedConfig writes the install's reclaim.yaml with only what a test
// outside a pod must change: the in-cluster client becomes the SA's
// kubeconfig, the clouds are the fakes, and an ecr section makes reclaim list
// the workloads too.
func writeDeployedConfig(t *testing.T, cm *unstructured.Unstructured, path, kubeconfig string, gce *gcefake.Server, ecr *ecrfake.Server) {
	t.Helper()
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "reclaim.yaml")
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("the ConfigMap's reclaim.yaml: %v", err)
	}
	clusters, _ := cfg["clusters"].([]any)
	inCluster := 0
	for _, c := range clusters {
		m := c.(map[string]any)
		if m["inCluster"] == true {
			inCluster++
			delete(m, "inCluster")
			m["kubeconfig"], m["context"] = kubeconfig, "sa"
		}
	}
	if inCluster != 1 {
		t.Fatalf("the install's config has %d inCluster clusters, want 1", inCluster)
	}
	g, _ := cfg["gce"].(map[string]any)
	projects, _ := g["projects"].([]any)
	for _, p := range projects {
		gce.SetQuota(p.(string), "asia-northeast1", "SSD_TOTAL_GB", 1500, 100)
	}
	g["endpoint"], g["withoutAuthentication"] = gce.URL(), true
	// No ECS, Lambda or Batch API here either: the install would read the
	// registry's account for them by default.
	cfg["ecr"] = map[string]any{"endpoint": ecr.URL(), "registries": []any{map[string]any{"account": account, "region": ecrRegion}}, "consumers": []any{}}
	st, _ := cfg["state"].(map[string]any)
	cmRef, _ := st["configMap"].(map[string]any)
	if cmRef == nil {
		t.Fatalf("the install's config keeps its state in %v, not in a ConfigMap", st)
	}
	cmRef["kubeconfig"], cmRef["context"] = kubeconfig, "sa"
	// No GKE or EKS API here to discover the fleet with.
	cfg["fleet"] = map[string]any{"discover": false}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkAccess asks the API server what the install's ServiceAccount may do.
func checkAccess(t *testing.T, ctx context.Context, c *testenv.Cluster, v deployVariant) {
	t.Helper()
	user := "system:serviceaccount:" + v.ns + ":" + v.sa
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + v.ns, "system:authenticated"}
	type req struct {
		verb, group, resource, ns, name string
		want                            bool
	}
	reqs := []req{
		// What it collects, cluster-wide.
		{"list", "", "persistentvolumes", "", "", true},
		{"list", "", "persistentvolumeclaims", "", "", true},
		{"list", "", "pods", "", "", true},
		{"list", "argoproj.io", "workflows", "", "", true},
		{"list", "apps", "deployments", "", "", true},
		{"list", "apps", "replicasets", "", "", true},
		{"list", "apps", "statefulsets", "", "", true},
		{"list", "apps", "daemonsets", "", "", true},
		{"list", "apps", "controllerrevisions", "", "", true},
		{"list", "batch", "jobs", "", "", true},
		{"list", "batch", "cronjobs", "", "", true},
		{"list", "", "nodes", "", "", true},
		// An agent's cluster identity: the kube-system namespace, only it.
		{"get", "", "namespaces", "", "kube-system", v.agent},
		{"get", "", "namespaces", "", "default", false},
		{"update", "", "namespaces", "", "kube-system", false},
		// Its state, and only its state.
		{"get", "", "configmaps", v.ns, v.state, true},
		{"update", "", "configmaps", v.ns, v.state, true},
		{"create", "", "configmaps", v.ns, "", true},
		{"update", "", "configmaps", v.ns, v.config, false},
		{"update", "", "configmaps", v.ns, v.state + "-journal", true},
		{"get", "", "configmaps", v.ns, v.state + "-0123456789abcdef-1", true},
		{"delete", "", "configmaps", v.ns, v.state + "-0123456789abcdef-1", true},
		{"update", "", "configmaps", v.ns, v.state + "-0123456789abcdef-1", false},
		{"get", "", "configmaps", "kube-system", "", false},
		{"list", "", "configmaps", "", "", false},
		// No Secrets, anywhere.
		{"get", "", "secrets", v.ns, "", false},
		{"list", "", "secrets", v.ns, "", false},
		{"list", "", "secrets", "", "", false},
		{"get", "", "secrets", "kube-system", "", false},
		// Nothing its policy does not delete, and no writes.
		{"delete", "", "persistentvolumes", "", "", false},
		{"delete", "", "nodes", "", "", false},
		{"update", "", "nodes", "", "", false},
		{"delete", "apps", "deployments", "apps", "", false},
		{"delete", "argoproj.io", "workflows", "apps", "", false},
		{"update", "", "persistentvolumeclaims", "apps", "", false},
		{"patch", "", "persistentvolumeclaims", "apps", "", false},
		{"create", "", "pods", "apps", "", false},
		{"watch", "", "pods", "", "", false},
		{"delete", "", "persistentvolumeclaims", "apps", "data", v.deletePVCs},
		{"get", "", "persistentvolumeclaims", "apps", "data", v.deletePVCs},
		{"deletecollection", "", "persistentvolumeclaims", "apps", "", false},
		// Finished Jobs and Pods, only with the optional grant: get and
		// delete one at a time, nothing else.
		{"delete", "batch", "jobs", "apps", "done", v.deleteWorkloads},
		{"get", "batch", "jobs", "apps", "done", v.deleteWorkloads},
		{"delete", "", "pods", "apps", "done", v.deleteWorkloads},
		{"get", "", "pods", "apps", "done", v.deleteWorkloads},
		{"deletecollection", "batch", "jobs", "apps", "", false},
		{"deletecollection", "", "pods", "apps", "", false},
		{"update", "batch", "jobs", "apps", "done", false},
		{"patch", "", "pods", "apps", "done", false},
		{"delete", "batch", "cronjobs", "apps", "", false},
		// The Lease, only with leader election, and only its own.
		{"get", "coordination.k8s.io", "leases", v.ns, "reclaim-other", false},
		{"update", "coordination.k8s.io", "leases", v.ns, "reclaim-other", false},
		{"delete", "coordination.k8s.io", "leases", v.ns, orDefault(v.lease, "reclaim"), false},
		{"update", "coordination.k8s.io", "leases", "kube-system", orDefault(v.lease, "reclaim"), false},
		{"create", "coordination.k8s.io", "leases", v.ns, "", v.lease != ""},
	}
	if v.lease != "" {
		reqs = append(reqs, req{"get", "coordination.k8s.io", "leases", v.ns, v.lease, true},
			req{"update", "coordination.k8s.io", "leases", v.ns, v.lease, true})
	}
	for _, r := range reqs {
		sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: r.verb, Group: r.group, Resource: r.resource, Namespace: r.ns, Name: r.name}}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != r.want {
			t.Errorf("%s may %s %s.%s ns=%q name=%q: %v, want %v (%s)", v.sa, r.verb, r.resource, r.group, r.ns, r.name,
				sar.Status.Allowed, r.want, sar.Status.Reason)
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runDeployedDaemon starts `reclaim daemon` with the install's config, whose
// Lease it reaches with the SA's token: it must take the Lease, plan, serve
// /metrics and stop cleanly on SIGTERM.
func runDeployedDaemon(t *testing.T, ctx context.Context, c *testenv.Cluster, v deployVariant, cfgPath string) []string {
	t.Helper()
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	d, _ := cfg["daemon"].(map[string]any)
	le, _ := d["leaderElection"].(map[string]any)
	if le["enabled"] != true {
		t.Fatalf("the daemon install does not enable leader election: %v", d)
	}
	if n, _ := le["name"].(string); n != v.lease && !(n == "" && v.lease == "reclaim") {
		t.Fatalf("the config's Lease %q is not the one the RBAC grants (%s)", n, v.lease)
	}
	// Outside a pod: the namespace the pod would have (a config with a
	// kubeconfig must name it: POD_NAMESPACE is believed only in-cluster),
	// the SA's kubeconfig, a free loopback port, no jitter.
	le["kubeconfig"], le["context"] = cfgKubeconfig(cfg), "sa"
	if _, ok := le["namespace"]; !ok {
		le["namespace"] = v.ns
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d["listen"], d["jitter"] = addr, "0s"
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dpath := filepath.Join(filepath.Dir(cfgPath), "daemon.yaml")
	if err := os.WriteFile(dpath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := reclaimPod(context.Background(), t, testenv.Pod{Manifest: testenv.Daemon, Namespace: v.ns}, "daemon", "--config", dpath)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill() // no-op once it has exited
		<-exited
	}()
	base := "http://" + addr
	var metricsText string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("reclaim daemon exited: %v\n%s", waitErr, logs.Bytes())
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		resp, err = http.Get(base + "/metrics")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		metricsText = string(b)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("reclaim daemon never became ready: %v\n%s", err, logs.Bytes())
	}
	lease, err := c.Client.CoordinationV1().Leases(v.ns).Get(ctx, v.lease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Lease %s/%s: %v\n%s", v.ns, v.lease, err, logs.Bytes())
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease %s/%s has no holder", v.ns, v.lease)
	}
	if !strings.Contains(metricsText, "reclaim_daemon_leader 1") {
		t.Errorf("/metrics does not show the daemon leading:\n%s", metricsText)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("reclaim daemon on SIGTERM: %v\n%s", waitErr, logs.Bytes())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("reclaim daemon did not stop within 30s of SIGTERM")
	}
	if strings.Contains(strings.ToLower(logs.String()), "forbidden") {
		t.Errorf("reclaim daemon's log mentions forbidden:\n%s", logs.Bytes())
	}
	return namesIn(metricsText)
}

func cfgKubeconfig(cfg map[string]any) string {
	st, _ := cfg["state"].(map[string]any)
	cm, _ := st["configMap"].(map[string]any)
	s, _ := cm["kubeconfig"].(string)
	return s
}

var metricName = regexp.MustCompile(`\breclaim_[a-z0-9_]+`)

func namesIn(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			if f := strings.Fields(line); len(f) > 2 {
				out = append(out, f[2])
			}
		} else if !strings.HasPrefix(line, "#") {
			if m := metricName.FindString(line); m != "" {
				out = append(out, m)
			}
		}
	}
	return out
}

func metricNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("metrics textfile: %v", err)
	}
	return namesIn(string(b))
}

// testAlertRules: the three copies of the rules agree, every metric they use
// is one reclaim exports, and the alerts the deploy promises exist.
func testAlertRules(t *testing.T, exported map[string]bool) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) map[string]any {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return m
	}
	plain := read("deploy/alerts/reclaim.rules.yml")
	chart := read("deploy/helm/reclaim/files/reclaim.rules.yml")
	operator := read("deploy/alerts/prometheus-rules.yaml")["spec"].(map[string]any)
	if !reflect.DeepEqual(plain, chart) {
		t.Errorf("deploy/alerts/reclaim.rules.yml and deploy/helm/reclaim/files/reclaim.rules.yml differ")
	}
	if !reflect.DeepEqual(plain, operator) {
		t.Errorf("deploy/alerts/reclaim.rules.yml and the spec of deploy/alerts/prometheus-rules.yaml differ")
	}
	// The chart's PrometheusRule carries the file.
	objs := renderDeploy(t, "helm", "../helm/reclaim", "--set", "prometheusRule.enabled=true")
	var rendered *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "PrometheusRule" {
			rendered = o
		}
	}
	if rendered == nil || !reflect.DeepEqual(rendered.Object["spec"], plain) {
		t.Errorf("the chart's PrometheusRule does not carry files/reclaim.rules.yml")
	}

	for _, g := range app.Gauges() {
		exported[g.Name] = true
	}
	used := map[string]bool{}
	alerts := map[string]string{}
	for _, g := range plain["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rule := r.(map[string]any)
			expr, _ := rule["expr"].(string)
			alerts[rule["alert"].(string)] = expr
			for _, m := range metricName.FindAllString(expr, -1) {
				used[m] = true
			}
		}
	}
	for m := range used {
		if !exported[m] {
			t.Errorf("an alert uses %s, which reclaim does not export", m)
		}
	}
	for _, want := range []struct{ what, re string }{
		{"no successful pass in N hours", `time\(\) - .*reclaim_run_last_success_timestamp_seconds`},
		{"a cluster not collected", `reclaim_source_complete\{kind="cluster"\}.*== 0`},
		{"quota headroom below threshold", `reclaim_gce_quota_used_ratio.*> 0\.`},
		{"quota runs out within 24h", `reclaim_gce_quota_runs_out_timestamp_seconds.*- time\(\) < 86400`},
		{"breaker tripped", `reclaim_plan_breaker_tripped.*== 1`},
		{"ECR repository near its limit", `reclaim_ecr_repository_images\b(?s).*reclaim_ecr_repository_image_limit`},
	} {
		re := regexp.MustCompile(want.re)
		found := false
		for _, expr := range alerts {
			found = found || re.MatchString(expr)
		}
		if !found {
			t.Errorf("no alert for %s (an expr matching %s)", want.what, want.re)
		}
	}
	if t.Failed() {
		names := make([]string, 0, len(exported))
		for n := range exported {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Logf("exported: %v", names)
	}
}

// runDeployedAgent runs `reclaim agent` with the install's config, reaching
// the cluster as the install's ServiceAccount and an S3 where its identity
// may write its own record only (deploy/aws/iam-policy-agent.json): it must
// read the cluster completely, name it, keep its state and publish.
func runDeployedAgent(t *testing.T, ctx context.Context, c *testenv.Cluster, v deployVariant, cm *unstructured.Unstructured, dir, kubeconfig string) {
	t.Helper()
	writeProfiles(t)
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "reclaim.yaml")
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("the ConfigMap's reclaim.yaml: %v", err)
	}
	clusters, _ := cfg["clusters"].([]any)
	if len(clusters) != 1 {
		t.Fatalf("the agent's config lists %d clusters, want its own", len(clusters))
	}
	cl := clusters[0].(map[string]any)
	if cl["inCluster"] != true {
		t.Fatalf("the agent's cluster is not inCluster: %v", cl)
	}
	delete(cl, "inCluster")
	cl["kubeconfig"], cl["context"] = kubeconfig, "sa"
	fleet, _ := cfg["fleet"].(map[string]any)
	snap, _ := fleet["records"].(map[string]any)
	if snap == nil {
		t.Fatalf("the agent's config has no fleet.records: %v", fleet)
	}
	place := inventory.Place{Platform: fmt.Sprint(cl["platform"]), Account: fmt.Sprint(cl["account"]), Location: fmt.Sprint(cl["location"])}
	bucketName, prefix := fmt.Sprint(snap["bucket"]), fmt.Sprint(snap["prefix"])
	key := published.Key(prefix, place, fmt.Sprint(cl["name"]))
	s3, err := testenv.StartS3(ctx, dir, map[string]testenv.S3Grant{
		"AKIDAGENTA": {Write: []string{bucketName + "/" + key}},
		"AKIDADMIN":  {Read: []string{bucketName + "/"}},
	}, bucketName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s3.Stop)
	snap["endpoint"], snap["profile"] = s3.URL, "agent-a"
	st, _ := cfg["state"].(map[string]any)
	cmRef, _ := st["configMap"].(map[string]any)
	if cmRef == nil {
		t.Fatalf("the agent's config keeps its state in %v, not in a ConfigMap", st)
	}
	cmRef["kubeconfig"], cmRef["context"] = kubeconfig, "sa"
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(cfgPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	// The test is not in a pod: it says so, as the config alone cannot.
	args := []string{"agent", "--config", cfgPath, "-o", "json", "--outside-cluster"}
	if v.apply {
		args = append(args, "--apply")
	}
	cmd := reclaimCmd(ctx, t, testenv.Agent, nil, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reclaim %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	if bytes.Contains(bytes.ToLower(stderr.Bytes()), []byte("forbidden")) {
		t.Errorf("reclaim agent's log mentions forbidden:\n%s", stderr.Bytes())
	}
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("reclaim agent's JSON report: %v\n%s", err, stdout.Bytes())
	}
	for _, s := range rep.Plan.Sources {
		if !s.Complete {
			t.Errorf("source %s %s incomplete: %v", s.Kind, s.Name, s.Problems)
		}
	}
	if _, err := c.Client.CoreV1().ConfigMaps(v.ns).Get(ctx, v.state, metav1.GetOptions{}); err != nil {
		t.Errorf("state ConfigMap %s/%s after the agent's pass: %v", v.ns, v.state, err)
	}
	admin, err := bucket.New(ctx, bucket.Options{Bucket: bucketName, PathStyle: true,
		Service: awsclient.Service{Account: fmt.Sprint(snap["account"]), Region: fmt.Sprint(snap["region"]), Endpoint: s3.URL, Profile: "admin", MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := admin.Get(ctx, key)
	if err != nil {
		t.Fatalf("the agent's record s3://%s/%s: %v", bucketName, key, err)
	}
	rec, err := published.Decode(bytes.NewReader(body), nil)
	if err != nil {
		t.Fatalf("the agent's record: %v", err)
	}
	if rec.Cluster.KubeSystemUID == "" || rec.Items() == 0 {
		t.Errorf("the agent's record names no cluster or lists nothing: %+v, %d items", rec.Cluster, rec.Items())
	}
}
