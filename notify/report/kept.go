package report

import (
	"fmt"
	"strings"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
)

// keptLines are one summary phrase per group of what kinds keep on purpose
// (layout.View.Kept), in the order the groups first appear: the group's
// count, size and monthly cost added up across kinds, and each kind's part
// when there are several (reclaim's backups on both clouds).
func keptLines(kept []layout.Kept, currency string) []string {
	var groups []string
	parts := map[string][]layout.Kept{}
	for _, k := range kept {
		if _, ok := parts[k.Group]; !ok {
			groups = append(groups, k.Group)
		}
		parts[k.Group] = append(parts[k.Group], k)
	}
	var out []string
	for _, g := range groups {
		var sum layout.Kept
		var each []string
		for _, k := range parts[g] {
			sum.Count += k.Count
			sum.Bytes += k.Bytes
			sum.Cost += k.Cost
			each = append(each, fmt.Sprintf("%s %d, %s, %.2f", k.Noun, k.Count, binarySize(k.Bytes), k.Cost))
		}
		s := fmt.Sprintf("%s that stay: %d, %s, about %s a month", g, sum.Count, binarySize(sum.Bytes), Money(sum.Cost, currency))
		if len(each) > 1 {
			s += " (" + strings.Join(each, "; ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// binarySize says bytes as the clouds bill snapshots: GiB, or TiB from
// 1024 GiB.
func binarySize(n int64) string {
	gib := float64(n) / float64(amount.GiB)
	switch {
	case gib >= 1024:
		return fmt.Sprintf("%.1f TiB", gib/1024)
	case gib >= 10 || gib == 0:
		return fmt.Sprintf("%.0f GiB", gib)
	}
	return fmt.Sprintf("%.1f GiB", gib)
}
