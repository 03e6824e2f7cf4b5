package k8spvc

import (
	"testing"

	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// The PVC kind is capped by its own section, never by the disks' caps: a
// shared cap read as if it bounded disks and PVCs together while allowing
// each its full count.
func TestCapsAreTheKindsOwn(t *testing.T) {
	cfg, err := config.Parse([]byte(`clusters: [{name: a}]
disks:
  deleteWorkflowPVCs: true
  grace: 2h
  maxDeletesPerRun: 50
  maxDeletePercent: 40%
  maxDeleteSizePerRun: 900G
  breakerCandidates: 900
  workflowPVCs:
    maxDeletesPerRun: 3
    maxDeletePercent: 5%
    maxDeleteSizePerRun: 100Gi
    breakerCandidates: 9
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := FromConfig(cfg, nil).Limits()
	if l.MaxDeletes != 3 || l.MaxDeletePercent != 0.05 || l.MaxFrees != (amount.Amount{N: 100, Unit: gcepd.GB}) || l.BreakerCandidates != 9 {
		t.Errorf("limits %+v: want the disks.workflowPVCs caps (3, 5%%, 100 GB, 9)", l)
	}
	if l.Section != "disks.workflowPVCs" || l.Grace.Hours() != 2 {
		t.Errorf("section %q, grace %s: want disks.workflowPVCs and the disks' grace", l.Section, l.Grace)
	}
}
