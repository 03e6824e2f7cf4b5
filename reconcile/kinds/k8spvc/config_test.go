package k8spvc

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const disks = `clusters: [{name: a}]
disks:
  grace: 2h
  maxDeletesPerRun: 50
  maxDeletePercent: 40%
  maxDeleteSizePerRun: 900G
  breakerCandidates: 900
`

// The PVC kind is capped by its own section, never by the disks' caps: a
// shared cap read as if it bounded disks and PVCs together while allowing
// each its full count. Without a grace of its own it waits the disks'.
func TestCapsAreTheKindsOwn(t *testing.T) {
	k := FromConfig(parse(t, disks+`k8sPvcs:
  delete: true
  maxDeletesPerRun: 3
  maxDeletePercent: 5%
  maxDeleteSizePerRun: 100Gi
  breakerCandidates: 9
`), nil)
	l := k.Limits()
	if l.MaxDeletes != 3 || l.MaxDeletePercent != 0.05 || l.MaxFrees != (amount.Amount{N: 100, Unit: gcepd.GB}) || l.BreakerCandidates != 9 {
		t.Errorf("limits %+v: want the k8sPvcs caps (3, 5%%, 100 GB, 9)", l)
	}
	if l.Section != "k8sPvcs" || l.Grace.Hours() != 2 || !k.Policy.Delete {
		t.Errorf("section %q, grace %s, delete %v: want k8sPvcs, the disks' grace, true", l.Section, l.Grace, k.Policy.Delete)
	}
}

// k8sPvcs.grace, when set, is the kind's own; absent, the section's
// defaults are the caps the disks section gave PVCs before.
func TestGraceAndDefaults(t *testing.T) {
	k := FromConfig(parse(t, disks+"k8sPvcs: {grace: 30m}\n"), nil)
	if k.Policy.Grace.Std() != 30*time.Minute || k.Policy.Delete {
		t.Errorf("grace %s, delete %v: want 30m, false", k.Policy.Grace, k.Policy.Delete)
	}
	k = FromConfig(parse(t, "clusters: [{name: a}]\n"), nil)
	want := config.Safety{Grace: config.Duration(7 * 24 * time.Hour), Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 0.10, BreakerCandidates: 200}}
	if k.Policy.Safety != want || k.Policy.Delete {
		t.Errorf("without the section: %+v, delete %v; want %+v, false", k.Policy.Safety, k.Policy.Delete, want)
	}
}

// A file that still says disks.deleteWorkflowPVCs and disks.workflowPVCs
// loads as if it said k8sPvcs, with a warning for each naming the new place.
func TestOldKeysStillWork(t *testing.T) {
	old := parse(t, disks+`  deleteWorkflowPVCs: true
  workflowPVCs:
    maxDeletesPerRun: 3
    maxDeletePercent: 5%
    maxDeleteSizePerRun: 100Gi
    breakerCandidates: 9
`)
	now := parse(t, disks+`k8sPvcs:
  delete: true
  maxDeletesPerRun: 3
  maxDeletePercent: 5%
  maxDeleteSizePerRun: 100Gi
  breakerCandidates: 9
`)
	if !reflect.DeepEqual(SectionOf(old), SectionOf(now)) || !reflect.DeepEqual(gcepd.DisksOf(old), gcepd.DisksOf(now)) {
		t.Errorf("old keys: %+v %+v\nnew keys: %+v %+v", SectionOf(old), gcepd.DisksOf(old), SectionOf(now), gcepd.DisksOf(now))
	}
	if o, n := FromConfig(old, nil), FromConfig(now, nil); o.Policy.Delete != n.Policy.Delete || !reflect.DeepEqual(o.Limits(), n.Limits()) {
		t.Errorf("old keys' kind %+v %+v, new keys' %+v %+v", o.Policy.Safety, o.Limits(), n.Policy.Safety, n.Limits())
	}
	w := strings.Join(old.Warnings, "\n")
	if len(old.Warnings) != 2 || !strings.Contains(w, "disks.deleteWorkflowPVCs is now named k8sPvcs.delete") || !strings.Contains(w, "disks.workflowPVCs's keys now stand in k8sPvcs") {
		t.Errorf("warnings %q: want one naming k8sPvcs.delete and one k8sPvcs", old.Warnings)
	}
	if len(now.Warnings) != 0 {
		t.Errorf("new keys warn: %q", now.Warnings)
	}
	// An old key with nothing under it is the defaults, as before.
	for _, y := range []string{"disks: {workflowPVCs: }\n", "disks: {workflowPVCs: {}, deleteWorkflowPVCs: }\n"} {
		c := parse(t, "clusters: [{name: a}]\n"+y)
		if s := SectionOf(c); s.Delete || s.MaxDeletesPerRun != 20 || len(c.Warnings) == 0 {
			t.Errorf("%s: %+v, warnings %q; want the defaults and a warning", y, s, c.Warnings)
		}
	}
	// A problem inside an old key names the place the file wrote.
	_, err := config.Parse([]byte("clusters: [{name: a}]\ndisks: {workflowPVCs: {breakerCandidates: 0}}\n"), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "disks.workflowPVCs.breakerCandidates: must be at least 1") {
		t.Errorf("err %v: want it at disks.workflowPVCs.breakerCandidates", err)
	}
}
