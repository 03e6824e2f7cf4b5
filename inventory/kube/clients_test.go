package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func writeKubeconfig(t *testing.T, current string, servers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\n")
	if current != "" {
		fmt.Fprintf(&b, "current-context: %s\n", current)
	}
	b.WriteString("clusters:\n")
	for name, srv := range servers {
		fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: %s\n    insecure-skip-tls-verify: true\n", name, srv)
	}
	b.WriteString("users:\n- name: u\n  user:\n    token: t0ken\ncontexts:\n")
	for name := range servers {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: %s\n    user: u\n", name, name)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRESTConfig(t *testing.T) {
	kc := writeKubeconfig(t, "a", map[string]string{"a": "https://a.example:6443", "b": "https://b.example:6443"})

	cfg, err := RESTConfig(Target{Name: "x", Kubeconfig: kc, QPS: 50, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" || cfg.QPS != 50 || cfg.Burst != 100 || cfg.UserAgent != "reclaim" || cfg.BearerToken != "t0ken" {
		t.Fatalf("current context: %+v", cfg)
	}
	cfg, err = RESTConfig(Target{Name: "x", Kubeconfig: kc, Context: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://b.example:6443" || cfg.UserAgent != "reclaim" {
		t.Fatalf("explicit context not honoured: %s", cfg.Host)
	}

	_, err = RESTConfig(Target{Name: "prod-a", Kubeconfig: kc, Context: "foo"})
	want := fmt.Sprintf(`cluster prod-a: kubeconfig %s: context "foo" not found (it has "a", "b")`, kc)
	if err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}

	noCurrent := writeKubeconfig(t, "", map[string]string{"a": "https://a.example"})
	_, err = RESTConfig(Target{Name: "prod-a", Kubeconfig: noCurrent})
	if err == nil || !strings.Contains(err.Error(), "no context given and no current-context set") {
		t.Fatalf("err %v", err)
	}

	missing := filepath.Join(t.TempDir(), "nope")
	_, err = RESTConfig(Target{Name: "prod-a", Kubeconfig: missing})
	if err == nil || !strings.HasPrefix(err.Error(), "cluster prod-a: kubeconfig "+missing+": cannot load: ") {
		t.Fatalf("err %v", err)
	}

	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, err = RESTConfig(Target{Name: "prod-a", InCluster: true})
	if err == nil || !strings.HasPrefix(err.Error(), "cluster prod-a: in-cluster config: ") {
		t.Fatalf("err %v", err)
	}

	// Empty path: default loading rules, i.e. $KUBECONFIG.
	t.Setenv("KUBECONFIG", kc)
	cfg, err = RESTConfig(Target{Name: "x", Context: "b"})
	if err != nil || cfg.Host != "https://b.example:6443" {
		t.Fatalf("default loading rules: %v %v", cfg, err)
	}
	// A pod has no KUBECONFIG (and no HOME): the default rules find nothing,
	// and the error says where they looked.
	t.Setenv("KUBECONFIG", "")
	clientcmdHome := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(t.TempDir(), ".kube", "config")
	defer func() { clientcmd.RecommendedHomeFile = clientcmdHome }()
	_, err = RESTConfig(Target{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "cluster x: default kubeconfig (") || !strings.Contains(err.Error(), "no context given") {
		t.Fatalf("no KUBECONFIG: %v", err)
	}
}

// fakeAPIServer answers the four lists with empty lists (workflows: 404, as
// an apiserver without the Argo CRD does) and records user agents and limits.
func fakeAPIServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?limit="+r.URL.Query().Get("limit")+" "+strings.SplitN(r.UserAgent(), "/", 2)[0])
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		kind := map[string]string{
			"/api/v1/persistentvolumes":      "PersistentVolumeList",
			"/api/v1/persistentvolumeclaims": "PersistentVolumeClaimList",
			"/api/v1/pods":                   "PodList",
		}[r.URL.Path]
		if kind == "" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`)
			return
		}
		fmt.Fprintf(w, `{"kind":%q,"apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`, kind)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

func TestCollectAll(t *testing.T) {
	srv, seen := fakeAPIServer(t)
	good := writeKubeconfig(t, "good", map[string]string{"good": srv.URL})
	down := writeKubeconfig(t, "down", map[string]string{"down": "https://127.0.0.1:1"})

	targets := []Target{
		{Name: "good", Kubeconfig: good, PageSize: 7, Projects: []string{"p-good"}},
		{Name: "down", Kubeconfig: down},
		{Name: "bad-context", Kubeconfig: good, Context: "nope"},
		{Name: "good-2", Kubeconfig: good, Context: "good"},
	}
	start := time.Now()
	res := CollectAll(context.Background(), targets, Options{PageSize: 100, Timeout: 10 * time.Second, Projects: []string{"p-default"}}, 2)
	if time.Since(start) > 10*time.Second {
		t.Fatal("too slow")
	}
	if len(res) != len(targets) {
		t.Fatalf("%d results for %d targets", len(res), len(targets))
	}
	for i, r := range res {
		if r.Name != targets[i].Name {
			t.Fatalf("result %d is %q, want %q (input order)", i, r.Name, targets[i].Name)
		}
	}
	if g := res[0]; !g.Complete || len(g.Problems) != 0 || len(g.Projects) != 1 || g.Projects[0] != "p-good" {
		t.Fatalf("good: %+v", g)
	}
	if g := res[3]; !g.Complete || g.Projects[0] != "p-default" {
		t.Fatalf("good-2: %+v", g)
	}
	d := res[1]
	if d.Complete || len(d.Problems) != 3 {
		t.Fatalf("down: %+v", d)
	}
	for i, res := range []string{"persistentvolumes", "persistentvolumeclaims", "pods"} {
		if want := "list " + res + ": cannot reach https://127.0.0.1:1: connection refused"; d.Problems[i] != want {
			t.Errorf("down problem %d: %q, want %q", i, d.Problems[i], want)
		}
	}
	b := res[2]
	want := fmt.Sprintf(`cluster bad-context: kubeconfig %s: context "nope" not found (it has "good")`, good)
	if b.Complete || len(b.Problems) != 1 || b.Problems[0] != want {
		t.Fatalf("bad-context: %+v\nwant %s", b.Problems, want)
	}

	var got7, got100 bool
	for _, s := range seen() {
		if !strings.HasSuffix(s, " reclaim") {
			t.Errorf("request without reclaim user agent: %s", s)
		}
		got7 = got7 || strings.HasPrefix(s, "/api/v1/pods?limit=7 ")
		got100 = got100 || strings.HasPrefix(s, "/api/v1/pods?limit=100 ")
	}
	if !got7 || !got100 {
		t.Errorf("per-target page size not applied: %q", seen())
	}
}

func TestCollectAllTimeoutOverride(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	kc := writeKubeconfig(t, "slow", map[string]string{"slow": srv.URL})
	res := CollectAll(context.Background(), []Target{{Name: "slow", Kubeconfig: kc, Timeout: 100 * time.Millisecond}}, Options{Timeout: time.Hour}, 0)
	if len(res) != 1 || res[0].Complete {
		t.Fatalf("%+v", res)
	}
	for _, p := range res[0].Problems {
		if !strings.HasSuffix(p, ": timed out after 100ms") {
			t.Errorf("problem %q", p)
		}
	}
}

// A pool builds a target's clients once and hands out the same ones after,
// so a daemon's passes share connections and rate limiters.
func TestPoolBuildsClientsOnce(t *testing.T) {
	kc := writeKubeconfig(t, "a", map[string]string{"a": "https://127.0.0.1:1"})
	p := NewPool([]Target{{Name: "prod-a", Kubeconfig: kc}})
	first, _, err := p.Clients("prod-a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Client("prod-a")
	if err != nil || again != first {
		t.Fatalf("second call built new clients (%p, %p) or failed: %v", first, again, err)
	}
	if _, err := p.Client("prod-z"); err == nil || !strings.Contains(err.Error(), "prod-z is not configured") {
		t.Fatalf("unknown cluster: %v", err)
	}
}
