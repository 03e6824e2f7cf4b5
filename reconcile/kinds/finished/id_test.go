package finished_test

import (
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// A discovered cluster that shares a name is read under its scoped name;
// its objects' ids must parse back, or a delete a killed run left pending
// never settles and is never audited (found by the randomized fleets).
func TestIDOfAScopedClusterParses(t *testing.T) {
	for _, scope := range []string{"111122223333/us-east-1", "my-gke-project"} {
		cluster := inventory.ScopedName("prod", scope)
		id := finished.ID(cluster, "jobs", "batch", "job-149")
		if k, ok := finished.ParseID(id, "jobs"); !ok || k.Cluster != cluster || k.Namespace != "batch" || k.Name != "job-149" {
			t.Fatalf("%s: parsed %+v %v", id, k, ok)
		}
	}
}
