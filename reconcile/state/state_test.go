package state

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/reconcile/engine"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestFileStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	fs := &FileStore{Path: filepath.Join(t.TempDir(), "sub", "state.json")}
	st, err := fs.Load(ctx)
	if err != nil || len(st.Resources) != 0 {
		t.Fatalf("missing file must be an empty state: %v %v", st, err)
	}
	st.Seen("projects/p/zones/z/disks/d", "1234", t0)
	st.Pending["projects/p/zones/z/disks/e"] = engine.Pending{Kind: "gce-disk", Started: t0}
	st.LastSuccess = t0
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	got, err := fs.Load(ctx)
	if err != nil || !got.Resources["projects/p/zones/z/disks/d"].FirstSeen.Equal(t0) || len(got.Pending) != 1 || !got.LastSuccess.Equal(t0) {
		t.Fatalf("%+v %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(fs.Path))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestFileStoreCorruptIsAnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(p, []byte("{not json"), 0o644)
	_, err := (&FileStore{Path: p}).Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "removing it restarts every grace period") {
		t.Fatalf("%v", err)
	}
	os.WriteFile(p, []byte(`{"version": 99}`), 0o644)
	if _, err := (&FileStore{Path: p}).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "upgrade reclaim") {
		t.Fatalf("%v", err)
	}
}

// bulky is a state of n image clocks, each with an incompressible digest.
func bulky(n int) engine.State {
	st := engine.NewState()
	b, id := make([]byte, 32), make([]byte, 64)
	for range n {
		rand.Read(b)
		rand.Read(id)
		st.Seen(fmt.Sprintf("ecr:123456789012/us-east-1/ci/app@sha256:%x", b), fmt.Sprintf("%x", id), t0)
	}
	return st
}

func TestConfigMapStoreRefusesOversizedState(t *testing.T) {
	cs := rvClientset()
	store := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	defer func(n int) { maxChunks = n }(maxChunks)
	maxChunks = 2
	err := store.Save(context.Background(), bulky(25000))
	if err == nil || !strings.Contains(err.Error(), "25000 ECR images") || !strings.Contains(err.Error(), "2 ConfigMaps") || !strings.Contains(err.Error(), "state.file") {
		t.Fatalf("err = %v", err)
	}
	if cms, _ := cs.CoreV1().ConfigMaps("reclaim").List(context.Background(), metav1.ListOptions{}); len(cms.Items) != 0 {
		t.Fatalf("a refused save left %d ConfigMaps", len(cms.Items))
	}
}

// A state larger than a ConfigMap is split into chunks; the next save
// replaces them, and a batch's journal is applied on load.
func TestConfigMapStoreChunksAndJournal(t *testing.T) {
	ctx := context.Background()
	cs := rvClientset()
	store := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	st := bulky(20000)
	if err := store.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		cms, _ := cs.CoreV1().ConfigMaps("reclaim").List(ctx, metav1.ListOptions{})
		return len(cms.Items)
	}
	n := count()
	if n < 3 {
		t.Fatalf("%d ConfigMaps for a 20,000-clock state: want a head and chunks", n)
	}
	// A second save replaces the chunks (none is left behind).
	st.Seen("ec2:123456789012/us-east-1/eni-1", "", t0)
	if err := store.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != n {
		t.Fatalf("%d ConfigMaps after the second save, %d after the first", got, n)
	}
	// A batch: a pending delete and a clock a skip dropped.
	var dropped string
	for id := range st.Resources {
		dropped = id
		break
	}
	pend := map[string]engine.Pending{"ec2:123456789012/us-east-1/eni-1": {Kind: "ec2-interface", Started: t0}}
	if err := store.Note(ctx, engine.Journal{Set: pend, Dropped: []string{dropped}}); err != nil {
		t.Fatal(err)
	}
	run2 := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	got, err := run2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Resources) != len(st.Resources)-1 || len(got.Pending) != 1 {
		t.Fatalf("%d clocks (want %d), pending %v", len(got.Resources), len(st.Resources)-1, got.Pending)
	}
	// Saved again, the journal is in the state; the old one no longer applies.
	got.Pending = map[string]engine.Pending{}
	if err := run2.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := (&ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}).Load(ctx)
	if err != nil || len(again.Pending) != 0 || len(again.Resources) != len(got.Resources) {
		t.Fatalf("%d clocks, pending %v, %v", len(again.Resources), again.Pending, err)
	}
	// A chunk edited by hand is refused, not read as a smaller state.
	head, _ := cs.CoreV1().ConfigMaps("reclaim").Get(ctx, "reclaim-state", metav1.GetOptions{})
	name := strings.Split(head.Data["chunks"], ",")[0]
	chunk, _ := cs.CoreV1().ConfigMaps("reclaim").Get(ctx, name, metav1.GetOptions{})
	chunk.BinaryData[chunkKey] = chunk.BinaryData[chunkKey][:100]
	cs.CoreV1().ConfigMaps("reclaim").Update(ctx, chunk, metav1.UpdateOptions{})
	if _, err := (&ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}).Load(ctx); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a damaged chunk: %v", err)
	}
}

// A state saved before chunks (one JSON value under state.json) still loads.
func TestConfigMapStoreReadsThePlainFormat(t *testing.T) {
	ctx := context.Background()
	st := engine.NewState()
	st.Seen("projects/p/zones/z/disks/d", "1", t0)
	b, _ := json.Marshal(st)
	cs := rvClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "reclaim-state", Namespace: "reclaim", ResourceVersion: "1"}, Data: map[string]string{stateKey: string(b)}})
	store := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	got, err := store.Load(ctx)
	if err != nil || !got.Resources["projects/p/zones/z/disks/d"].FirstSeen.Equal(t0) {
		t.Fatalf("%+v %v", got, err)
	}
	if err := store.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Load(ctx); err != nil || len(got.Resources) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
}

// The file store's journal: applied on load while it follows the saved
// state, and gone with the next save.
func TestFileStoreJournal(t *testing.T) {
	ctx := context.Background()
	fs := &FileStore{Path: filepath.Join(t.TempDir(), "state.json")}
	if err := fs.Note(ctx, engine.Journal{}); err == nil {
		t.Fatal("a journal without a saved state")
	}
	st := engine.NewState()
	st.Seen("a", "", t0)
	st.Seen("b", "", t0)
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := fs.Note(ctx, engine.Journal{Set: map[string]engine.Pending{"a": {Kind: "x", Started: t0}}, Dropped: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	got, err := (&FileStore{Path: fs.Path}).Load(ctx)
	if err != nil || len(got.Pending) != 1 || len(got.Resources) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	// A journal of an earlier save is not applied to a later one.
	j, _ := os.ReadFile(fs.journal())
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(fs.journal(), j, 0o644)
	if got, err := (&FileStore{Path: fs.Path}).Load(ctx); err != nil || len(got.Pending) != 0 || len(got.Resources) != 2 {
		t.Fatalf("a stale journal was applied: %+v %v", got, err)
	}
}

// rvClientset is a fake clientset whose ConfigMaps have resourceVersions,
// checked on update as the apiserver does.
func rvClientset(objs ...runtime.Object) *k8sfake.Clientset {
	cs := k8sfake.NewClientset(objs...)
	var rv int
	cs.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rv++
		a.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap).ResourceVersion = strconv.Itoa(rv)
		return false, nil, nil
	})
	cs.PrependReactor("update", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cm := a.(k8stesting.UpdateAction).GetObject().(*corev1.ConfigMap)
		old, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("configmaps"), cm.Namespace, cm.Name)
		if err == nil && old.(*corev1.ConfigMap).ResourceVersion != cm.ResourceVersion {
			return true, nil, apierrors.NewConflict(corev1.Resource("configmaps"), cm.Name, fmt.Errorf("stale"))
		}
		rv++
		cm.ResourceVersion = strconv.Itoa(rv)
		return false, nil, nil
	})
	return cs
}

// One run at a time holds a file store; the lock goes with the holder.
func TestFileStoreLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")
	unlock, err := (&FileStore{Path: path}).Lock(ctx, "run a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&FileStore{Path: path}).Lock(ctx, "run b"); err == nil || !strings.Contains(err.Error(), "held by another reclaim run (run a") {
		t.Fatalf("second holder: %v", err)
	}
	unlock()
	unlock2, err := (&FileStore{Path: path}).Lock(ctx, "run b")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// One run at a time holds a ConfigMap store: the second is refused, naming
// the holder; an expired lock (a killed run's) is taken over; unlock frees it;
// and the journal entries of the holder keep the lock.
func TestConfigMapStoreLock(t *testing.T) {
	ctx := context.Background()
	cs := rvClientset()
	a := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	unlock, err := a.Lock(ctx, "run a")
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := a.Note(ctx, engine.Journal{Set: map[string]engine.Pending{"x": {Kind: "k"}}}); err != nil {
		t.Fatal(err)
	}
	b := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	if _, err := b.Lock(ctx, "run b"); err == nil || !strings.Contains(err.Error(), "held by another reclaim run (run a") {
		t.Fatalf("second holder: %v", err)
	}
	unlock()
	unlockB, err := b.Lock(ctx, "run b")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	// Killed: its lock is not cleared, and expires; its late unlock does
	// not clear the next holder's.
	defer unlockB()
	c := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	if _, err := c.Lock(ctx, "run c"); err == nil {
		t.Fatal("a live lock was taken over")
	}
	j, _ := cs.CoreV1().ConfigMaps("reclaim").Get(ctx, "reclaim-state-journal", metav1.GetOptions{})
	j.Data[lockKey] = `{"holder":"run b","until":"2020-01-01T00:00:00Z"}`
	cs.CoreV1().ConfigMaps("reclaim").Update(ctx, j, metav1.UpdateOptions{})
	if _, err := c.Lock(ctx, "run c"); err != nil {
		t.Fatalf("an expired lock: %v", err)
	}
}
