package testenv

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const wantVersion = "v1.31.4"

func TestCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Builds (or waits for a build of) the binaries first, so that the start
	// time measured below is the cluster's alone.
	if _, _, err := Binaries(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	c, err := StartCluster(ctx, "test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster %q ready at %s in %v (dir %s)", c.Name, c.URL, time.Since(start).Round(time.Millisecond), c.Dir)
	defer func() {
		c.Stop()
		c.Stop() // idempotent
		if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) && !keepFromEnv() {
			t.Errorf("Dir %s not removed: %v", c.Dir, err)
		}
		if conn, err := net.Dial("tcp", strings.TrimPrefix(c.URL, "https://")); err == nil {
			conn.Close()
			t.Errorf("apiserver still listening at %s after Stop", c.URL)
		}
	}()
	if !strings.HasPrefix(c.URL, "https://127.0.0.1:") || !strings.HasPrefix(c.EtcdURL, "http://127.0.0.1:") {
		t.Errorf("non-loopback URLs %s, %s", c.URL, c.EtcdURL)
	}

	// The kubeconfig works, for both contexts, and verifies TLS with the CA.
	admin := clientFromKubeconfig(t, c.Kubeconfig, "admin")
	restricted := clientFromKubeconfig(t, c.Kubeconfig, "restricted")
	v, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != wantVersion {
		t.Errorf("server version %q, want %q", v.GitVersion, wantVersion)
	}

	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reclaim-test"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Pods can be created without service accounts or nodes.
	if _, err := admin.CoreV1().Pods(ns.Name).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating pod: %v", err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-leaked", Labels: map[string]string{"reclaim.dev/test": "true"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv-leaked"}},
		},
	}
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Restricted: forbidden, then allowed after Grant.
	if _, err := restricted.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("restricted list PVs before Grant: got %v, want Forbidden", err)
	}
	if err := c.Grant(ctx, RestrictedUser, []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch"},
	}}); err != nil {
		t.Fatal(err)
	}
	rc, err := kubernetes.NewForConfig(c.Restricted())
	if err != nil {
		t.Fatal(err)
	}
	pvs, err := rc.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("restricted list PVs after Grant: %v", err)
	}
	if len(pvs.Items) != 1 || pvs.Items[0].Name != pv.Name {
		t.Errorf("restricted sees PVs %v, want [%s]", pvs.Items, pv.Name)
	}
	if err := rc.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("restricted delete PV: got %v, want Forbidden (only get/list/watch granted)", err)
	}

	// Workflow CRD, with status written directly (no status subresource).
	if err := c.InstallWorkflowCRD(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.InstallWorkflowCRD(ctx); err != nil {
		t.Fatalf("second InstallWorkflowCRD: %v", err)
	}
	wf := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Workflow",
		"metadata":   map[string]any{"name": "wf-1", "namespace": ns.Name},
		"spec":       map[string]any{"entrypoint": "main", "templates": []any{map[string]any{"name": "main"}}},
		"status":     map[string]any{"phase": "Succeeded", "finishedAt": "2025-01-01T00:00:00Z"},
	}}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(WorkflowGVR).Namespace(ns.Name).Create(ctx, wf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wfs, err := c.Dynamic.Resource(WorkflowGVR).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wfs.Items) != 1 {
		t.Fatalf("listed %d workflows, want 1", len(wfs.Items))
	}
	if phase, _, _ := unstructured.NestedString(wfs.Items[0].Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("workflow status.phase = %q, want Succeeded (status must be writable without a subresource)", phase)
	}
}

func TestUnreachableKubeconfig(t *testing.T) {
	path, err := UnreachableKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	client := clientFromKubeconfig(t, path, "")
	start := time.Now()
	_, err = client.Discovery().ServerVersion()
	if err == nil {
		t.Fatal("ServerVersion succeeded against the unreachable kubeconfig")
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v, want connection refused", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(buildScript(root)); err != nil {
		t.Errorf("RepoRoot %s has no internal/testenv/testbins/build.sh: %v", root, err)
	}
}

func clientFromKubeconfig(t *testing.T, path, context string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
