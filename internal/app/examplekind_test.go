package app_test

// A kind is one package: internal/examplekind holds a whole kind (config
// section, tap, proposals, delete) and is registered here the way
// internal/app/kinds.go registers reclaim's own, with nothing edited in the
// config package, the collector or the engine. It runs against a real
// kube-apiserver (internal/testenv).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/examplekind"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/reconcile/engine"
)

func TestAKindIsOnePackage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver")
	}
	// The one line a kind adds to internal/app/kinds.go: its Module.
	saved := app.Registered
	t.Cleanup(func() { app.Registered = saved })
	app.Register(examplekind.Module)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := testenv.StartCluster(ctx, "examplekind", testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	// The restricted user may read all a cluster's collection needs, but
	// not ConfigMaps: only the kind's tap fails.
	list := []string{"list"}
	if err := c.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{
		{Verbs: list, APIGroups: []string{""}, Resources: []string{"persistentvolumes", "persistentvolumeclaims", "pods"}},
		{Verbs: list, APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}},
	}); err != nil {
		t.Fatal(err)
	}
	ns := "scratch"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, labels := range map[string]map[string]string{
		"tmp":           {"reclaim.dev/temporary": "true"},
		"tmp-protected": {"reclaim.dev/temporary": "true", "reclaim.dev/protect": "true"},
		"plain":         nil,
	} {
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	file := func(context string) *config.Config {
		data := fmt.Sprintf(`clusters:
  - name: prod
    kubeconfig: %s
    context: %s
state: {file: %s}
audit: {file: %s}
exampleConfigMaps:
  maxAge: 1m
  grace: 1h
`, c.Kubeconfig, context, filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl"))
		cfg, err := config.Parse([]byte(data), "reclaim.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	start := time.Now()
	pass := func(context string, at time.Duration) (engine.Action, *engine.Plan) {
		t.Helper()
		now := start.Add(at)
		rep, err := app.Run(ctx, file(context), app.Deps{Now: func() time.Time { return now }}, app.Options{Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"tmp-protected", "plain"} {
			if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Fatalf("%s: %v: deleted, but it is protected or not temporary", name, err)
			}
		}
		var got engine.Action
		for d := range rep.Plan.All() {
			switch {
			case d.Kind != examplekind.Name:
			case d.Name == "tmp-protected" && (d.Action != engine.Keep || !strings.Contains(d.Why(), "protected")):
				t.Errorf("tmp-protected: %s (%s), want keep as protected", d.Action, d.Why())
			case d.Name == "plain":
				t.Error("plain was proposed: it is not temporary")
			case d.Name == "tmp":
				got = d.Action
			}
		}
		return got, rep.Plan
	}

	// Pass 1: a candidate, its grace starts.
	if a, p := pass("admin", 10*time.Minute); a != engine.Mark {
		t.Fatalf("pass 1: tmp %q, want mark: %+v", a, p.Decisions)
	}
	// Pass 2, past the grace, but the tap may not list ConfigMaps: it is
	// incomplete, what it did not read is neither proposed nor gone (its
	// clock is kept), and the run says why.
	_, p := pass("restricted", 2*time.Hour)
	if !p.Incomplete || !slices.ContainsFunc(p.Blocked, func(b string) bool {
		return strings.Contains(b, "configmaps of cluster prod could not be read") && strings.Contains(b, "needs list on configmaps")
	}) {
		t.Fatalf("pass 2: incomplete=%v, blocked %q; want the tap's failure named", p.Incomplete, p.Blocked)
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "tmp", metav1.GetOptions{}); err != nil {
		t.Fatalf("pass 2 deleted tmp with its tap unread: %v", err)
	}
	// Pass 3: read again, past its grace: deleted, through the shared
	// Kubernetes delete path.
	if a, p := pass("admin", 3*time.Hour); a != engine.Delete {
		t.Fatalf("pass 3: tmp %q, want delete: %+v", a, p.Decisions)
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "tmp", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("pass 3 did not delete tmp: %v", err)
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"example-configmap/prod/scratch/tmp"`) {
		t.Errorf("the audit log does not record the delete: %v\n%s", err, audit)
	}
}
