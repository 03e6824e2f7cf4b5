package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory/kube"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// names is a tap sink keeping the names of one namespace's objects.
type names struct {
	ns  string
	got []string
}

func (n *names) Add(u *unstructured.Unstructured) error {
	if u.GetNamespace() == n.ns {
		n.got = append(n.got, u.GetName())
	}
	return nil
}
func (n *names) Result() any { return n.got }

func configMapTap(ns string) kube.Tap {
	return kube.Tap{Name: "configmaps", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		New: func(string) kube.TapSink { return &names{ns: ns} }}
}

// A kind's tap is one paginated pass over its resource in the real
// apiserver, with its own completeness: a pass the service account may not
// make is incomplete and says what to grant, and holds nothing else.
func TestTapRealAPIServer(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	ns := namespace(t, c.Client, "tap")
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("cm-%d", i)
		want = append(want, name)
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Page size 2: the pass takes several pages and still sees each once.
	// Two taps on ConfigMaps share one pass, each with its own sink.
	var lists atomic.Int64
	admin := rest.CopyConfig(c.Admin)
	admin.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps") {
				lists.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	other := configMapTap(ns)
	other.Name = "configmaps-again"
	o := kube.Options{Timeout: time.Minute, PageSize: 2, Taps: []kube.Tap{configMapTap(ns), other}}
	r := kube.Collect(ctx, "admin", c.Client, must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(admin)), o)
	for _, name := range []string{"configmaps", "configmaps-again"} {
		got, ok := r.Taps[name]
		if !ok || !got.Complete || got.Problem != "" || got.Version == "" || got.Items < 5 {
			t.Fatalf("tap %s = %+v, want complete with a version and at least 5 items", name, got)
		}
		if names, _ := got.Data.([]string); !slices.Equal(names, want) {
			t.Errorf("tap %s read %q, want %q", name, names, want)
		}
	}
	if pages := int64(r.Taps["configmaps"].Items+1) / 2; lists.Load() != pages {
		t.Errorf("%d list calls for %d ConfigMaps in pages of 2, want %d: one pass for both taps", lists.Load(), r.Taps["configmaps"].Items, pages)
	}

	cs := must[*kubernetes.Clientset](t)(kubernetes.NewForConfig(c.Restricted()))
	dyn := must[*dynamic.DynamicClient](t)(dynamic.NewForConfig(c.Restricted()))
	r = kube.Collect(ctx, "restricted", cs, dyn, o)
	if got := r.Taps["configmaps"]; got.Complete || !strings.Contains(got.Problem, "forbidden — the service account needs list on configmaps") {
		t.Fatalf("without list on configmaps: %+v, want incomplete and forbidden", got)
	}
	for _, p := range r.Problems {
		if strings.Contains(p, "configmaps") {
			t.Errorf("the tap's failure is the cluster's problem too: %q", p)
		}
	}
	if err := c.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}); err != nil {
		t.Fatal(err)
	}
	r = kube.Collect(ctx, "restricted", cs, dyn, o)
	if got := r.Taps["configmaps"]; !got.Complete {
		t.Fatalf("with list on configmaps: %+v, want complete", got)
	}
}
