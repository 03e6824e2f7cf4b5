package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	k8sfake "k8s.io/client-go/kubernetes/fake"

	"reclaim.dev/reclaim/engine"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestFileStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	fs := FileStore{Path: filepath.Join(t.TempDir(), "sub", "state.json")}
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
	_, err := FileStore{Path: p}.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "removing it restarts every grace period") {
		t.Fatalf("%v", err)
	}
	os.WriteFile(p, []byte(`{"version": 99}`), 0o644)
	if _, err := (FileStore{Path: p}).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "upgrade reclaim") {
		t.Fatalf("%v", err)
	}
}

func TestConfigMapStoreRefusesOversizedState(t *testing.T) {
	cs := k8sfake.NewClientset()
	store := &ConfigMapStore{Client: cs, Namespace: "reclaim", Name: "reclaim-state"}
	st := engine.NewState()
	for i := range 20000 {
		// An image's identity is its digest, in the id: its clock has none.
		st.Seen(fmt.Sprintf("ecr:123456789012/us-east-1/ci/app@sha256:%064d", i), "", time.Now())
	}
	err := store.Save(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "more than a ConfigMap holds") || !strings.Contains(err.Error(), "state.file") {
		t.Fatalf("err = %v", err)
	}
}
