package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/providers/gcpclient"
	"reclaim.dev/reclaim/reconcile/engine"
)

// A GKE-only fleet with its records in GCS: two real API servers as two
// GKE clusters of one region, an agent each publishing to a real GCS
// server (testbins/gcsserver) with its own service account, which may
// write its own record only; a deleter reading the records with another,
// and GCE.
func TestGKEFleetOnGCSDeletesOnlyOrphans(t *testing.T) {
	w := &agentWorld{eksWorld: newEKSWorld(t), gce: gcefake.New(gcefake.Options{}), deleterProfile: "deleter", gcsKeys: map[string]string{}}
	t.Cleanup(w.gce.Close)
	t.Setenv("KUBECONFIG", filepath.Join(w.dir, "no-kubeconfig"))
	placeGA := inventory.Place{Platform: inventory.GKE, Project: project, Location: "asia-northeast1"}
	placeGB := inventory.Place{Platform: inventory.GKE, Project: project, Location: zoneB}
	keyGA, keyGB := keyOf(placeGA, "gke-a"), keyOf(placeGB, "gke-b")
	in := func(k string) string { return recordBucket + "/" + k }
	sa := func(profile string) string { return profile + "@" + project + ".iam.gserviceaccount.com" }
	srv, err := testenv.StartGCS(context.Background(), w.dir, map[string]testenv.GCSGrant{
		sa("agent-a"): {Write: []string{in(keyGA)}},
		sa("agent-b"): {Write: []string{in(keyGB)}},
		sa("deleter"): {Read: []string{in(recordPrefix + "/")}},
		sa("partial"): {Read: []string{in(keyGA)}, List: []string{in(recordPrefix + "/")}},
		sa("admin"):   {Read: []string{in("")}, Write: []string{in("")}},
	}, recordBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	w.gcs = srv
	for _, p := range []string{"agent-a", "agent-b", "deleter", "partial", "admin"} {
		if w.gcsKeys[p], err = srv.KeyFile(w.dir, sa(p)); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := bucket.NewGCS(context.Background(), bucket.GCSOptions{Bucket: recordBucket, MaxAttempts: 1,
		Reach: gcpclient.Reach{Endpoint: srv.Endpoint(), CredentialsFile: w.gcsKeys["admin"]}})
	if err != nil {
		t.Fatal(err)
	}

	// Disks of the region: one a PV in each cluster names, one nothing
	// names, all orphans for longer than the grace period.
	usedA, usedB, orphan := w.gkeDisk(zoneA, "bound-in-a"), w.gkeDisk(zoneB, "bound-in-b"), w.gkeDisk(zoneB, "orphan")
	(&world{t: t, prefix: w.prefix}).pv(prodA, usedA)
	(&world{t: t, prefix: w.prefix}).pv(prodB, usedB)
	w.seenPastGrace(usedA, usedB, orphan)
	deleter := func() string {
		y := fmt.Sprintf(`clusters:
  - name: gke-a
%s  - name: gke-b
%sfleet:
  discover: false
%s%sstate:
  file: %s
audit:
  file: %s
`, placeYAML(placeGA), placeYAML(placeGB), w.snapshotsYAML(w.deleterProfile), w.disksYAML(), w.statePath(), w.auditPath())
		p := filepath.Join(w.dir, "gke-deleter.yaml")
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	held := func(name, because string) {
		t.Helper()
		rep := runConfig(t, deleter(), w.now, true)
		if rep.ExitCode != report.ExitIncomplete || !strings.Contains(text(rep), because) || !w.gce.HasDisk(orphan) {
			t.Fatalf("%s: exit %d (want %d), orphan left %v (want true), or the report does not say %q:\n%s",
				name, rep.ExitCode, report.ExitIncomplete, w.gce.HasDisk(orphan), because, text(rep))
		}
		want(t, rep, orphan, engine.Mark, "")
	}

	// Only gke-a's agent has published: gke-b's record is missing.
	w.agent(prodA, "gke-a", placeGA, "agent-a", false)
	held("missing", "no record at gs://"+recordBucket+"/"+keyGB)

	// Both have; the deleter's identity may read gke-a's only.
	w.agent(prodB, "gke-b", placeGB, "agent-b", false)
	w.deleterProfile = "partial"
	held("denied", "reading gs://"+recordBucket+"/"+keyGB+" was denied")
	w.deleterProfile = "deleter"

	// gke-a's agent, misconfigured as gke-b, may not overwrite gke-b's
	// record: it stands as gke-b's agent wrote it.
	good, err := admin.Get(context.Background(), keyGB)
	if err != nil {
		t.Fatal(err)
	}
	w.agent(prodA, "gke-b", placeGB, "agent-a", false)
	if got, err := admin.Get(context.Background(), keyGB); err != nil || !bytes.Equal(got, good) {
		t.Fatalf("after gke-a's agent wrote as gke-b: %d bytes, %v; want gke-b's own record", len(got), err)
	}

	// Both records read: accepted, they keep what they show and release
	// nothing until they settle (the world's dropSettle, 6h).
	if rep := runConfig(t, deleter(), w.now, true); !w.gce.HasDisk(orphan) || !strings.Contains(text(rep), "records settle at") {
		t.Fatalf("first records: orphan left %v (want true), or the report does not say when they settle:\n%s", w.gce.HasDisk(orphan), text(rep))
	}
	// Settled, and fresh: the orphan goes, the disks either cluster uses stay.
	w.now = w.now.Add(7 * time.Hour)
	w.agent(prodA, "gke-a", placeGA, "agent-a", false)
	w.agent(prodB, "gke-b", placeGB, "agent-b", false)
	rep := runConfig(t, deleter(), w.now, true)
	if rep.ExitCode != report.ExitOK {
		t.Fatalf("deleter exit %d\n%s", rep.ExitCode, text(rep))
	}
	want(t, rep, usedA, engine.Keep, "")
	want(t, rep, usedB, engine.Keep, "")
	if w.gce.HasDisk(orphan) || !w.gce.HasDisk(usedA) || !w.gce.HasDisk(usedB) {
		t.Fatalf("left: orphan %v, gke-a's %v, gke-b's %v (want false, true, true)", w.gce.HasDisk(orphan), w.gce.HasDisk(usedA), w.gce.HasDisk(usedB))
	}
	// The records' generations, as a reader that skips unchanged ones
	// lists them.
	objs, err := admin.List(context.Background(), recordPrefix+"/")
	if err != nil || len(objs) != 2 {
		t.Fatalf("listing the records: %+v, %v; want gke-a's and gke-b's", objs, err)
	}

	// The real binary, as a CronJob would run it: the pod's environment,
	// the records its only view of the clusters.
	w.now = time.Now().UTC()
	w.agent(prodA, "gke-a", placeGA, "agent-a", false)
	w.agent(prodB, "gke-b", placeGB, "agent-b", false)
	out, err := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--config", deleter(), "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("reclaim run from records in GCS: %v\n%s", err, out)
	}
}
