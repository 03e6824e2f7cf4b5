package records

import (
	"fmt"
	"strings"

	"reclaim.dev/reclaim/inventory/kube"
)

// Shown is what the clouds show made for one cluster, per class of
// evidence a record lists ("pvs", "pvcs", "pods", "podIPs", "nodes",
// "images", "tap " and a tap's name): what a first record claiming none
// of a class is not believed against. Each entry says what it is ("GCE
// disk pvc-1").
type Shown map[string][]string

// Add says the clouds show what, of class, made for the cluster.
func (s Shown) Add(class, what string) { s[class] = append(s[class], what) }

// Evidence adds to shown what the run's cloud reads (clouds, by read
// name: View.Clouds) show made for the cluster t reads, by the labels
// and tags the clouds' controllers put on what they make for a cluster.
// Each kind that reads a cloud says its part (kind.Module's Evidence);
// the wiring hands the reader them all as one.
type Evidence func(clouds map[string]any, t kube.Target, shown Shown)

// unseen says what the clouds show made for the cluster of class, which
// a first record lists none of.
func (s Shown) unseen(class string) string {
	what := s[class]
	more := ""
	if len(what) > 3 {
		more = fmt.Sprintf(" and %d more", len(what)-3)
		what = what[:3]
	}
	return fmt.Sprintf("no %s, where the clouds show %s%s made for the cluster", class, strings.Join(what, ", "), more)
}
