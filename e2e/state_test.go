package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// The in-cluster state store: a ConfigMap, created on first save, and an
// overlapping run's save is refused rather than silently overwriting clocks.
func TestConfigMapStateStore(t *testing.T) {
	ctx := context.Background()
	ns := fmt.Sprintf("reclaim-state-test-%d", worlds.Add(1))
	if _, err := prodA.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run1 := &state.ConfigMapStore{Client: prodA.Client, Namespace: ns, Name: "reclaim-state"}
	st, err := run1.Load(ctx)
	if err != nil || len(st.Resources) != 0 {
		t.Fatalf("%v %v", st, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	st.Seen("projects/p/zones/z/disks/d", "", now)
	if err := run1.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	// Two runs load the same version; the first to save wins.
	run2 := &state.ConfigMapStore{Client: prodA.Client, Namespace: ns, Name: "reclaim-state"}
	run3 := &state.ConfigMapStore{Client: prodA.Client, Namespace: ns, Name: "reclaim-state"}
	s2, err := run2.Load(ctx)
	if err != nil || !s2.Resources["projects/p/zones/z/disks/d"].FirstSeen.Equal(now) {
		t.Fatalf("%+v %v", s2, err)
	}
	s3, _ := run3.Load(ctx)
	s2.Seen("projects/p/zones/z/disks/e", "", now)
	if err := run2.Save(ctx, s2); err != nil {
		t.Fatal(err)
	}
	err = run3.Save(ctx, s3)
	if err == nil || !strings.Contains(err.Error(), "another reclaim run changed it meanwhile") {
		t.Fatalf("overlapping save: %v", err)
	}
	// A store keeps working across its own saves (it tracks its resourceVersion).
	s2.Seen("projects/p/zones/z/disks/f", "", now)
	if err := run2.Save(ctx, s2); err != nil {
		t.Fatal(err)
	}
}

// A state of 150,000 clocks (several MiB gzipped) is saved in chunks the real
// apiserver accepts (each ConfigMap under 1 MiB), read back whole, and a
// later save leaves no chunk of the earlier one behind.
func TestConfigMapStateStoreHoldsALargeState(t *testing.T) {
	testenv.Scale(t)
	ctx := context.Background()
	ns := fmt.Sprintf("reclaim-state-test-%d", worlds.Add(1))
	if _, err := prodA.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := engine.NewState()
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 150000 {
		st.Seen(fmt.Sprintf("ecr:123456789012/us-east-1/ci/app-%d@sha256:%x", i%500, sha256.Sum256([]byte(strconv.Itoa(i)))), rand.Text(), now)
	}
	store := &state.ConfigMapStore{Client: prodA.Client, Namespace: ns, Name: "reclaim-state"}
	if err := store.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	chunks := func() int {
		l, err := prodA.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "reclaim.dev/state-of=reclaim-state"})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	n := chunks()
	if n < 3 {
		t.Fatalf("%d ConfigMaps for 150,000 clocks", n)
	}
	other := &state.ConfigMapStore{Client: prodA.Client, Namespace: ns, Name: "reclaim-state"}
	got, err := other.Load(ctx)
	if err != nil || got.Clocks() != st.Clocks() {
		t.Fatalf("%d clocks read back of %d: %v", got.Clocks(), st.Clocks(), err)
	}
	got.Seen("ec2:123456789012/us-east-1/eni-1", "", now)
	if err := other.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if m := chunks(); m != n {
		t.Fatalf("%d ConfigMaps after the second save, %d after the first: chunks left behind", m, n)
	}
	// The first store's view is stale now: its save is refused and leaves nothing.
	if err := store.Save(ctx, st); err == nil || !strings.Contains(err.Error(), "another reclaim run") {
		t.Fatalf("stale save: %v", err)
	}
	if m := chunks(); m != n {
		t.Fatalf("%d ConfigMaps after a refused save, want %d", m, n)
	}
}
