package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/state"
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
