package notify

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"reclaim.dev/reclaim/reconcile"
)

// keptOrder lists keep classes strongest first, for the KEPT column.
var keptOrder = []string{reconcile.ClassInUse, reconcile.ClassIndexChild, reconcile.ClassProtectedTag,
	reconcile.ClassPulled, reconcile.ClassNewest, reconcile.ClassYoung, reconcile.ClassNotNeeded, reconcile.ClassProtected, reconcile.ClassNoPolicy}

func writeRepositories(b *strings.Builder, p *reconcile.Plan) {
	if len(p.Repositories) == 0 {
		return
	}
	fmt.Fprintln(b, "ECR REPOSITORIES")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  REPOSITORY\tIMAGES/LIMIT\tUSED\tTRIM ABOVE→TO\tDELETE\tFREES\tMARK\tUSED AFTER\tKEPT")
	for _, r := range p.Repositories {
		var kept []string
		for _, c := range keptOrder {
			if n := r.Kept[c]; n > 0 {
				kept = append(kept, fmt.Sprintf("%d %s", n, c))
			}
		}
		if r.Limit == 0 {
			fmt.Fprintf(tw, "  %s\t%d\t\t\t\t\t\t\t%s\n", r.Repository, r.Images, strings.Join(kept, ", "))
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d/%d\t%.1f%%\t%d→%d\t%d\t%s\t%d\t%.1f%%\t%s\n", r.Repository, r.Images, r.Limit, r.UsedPct,
			r.HighWater, r.Target, r.Delete, bytesString(r.FreedBytes), r.Mark, r.UsedPctAfter, strings.Join(kept, ", "))
	}
	tw.Flush()
	for _, r := range p.Repositories {
		if r.Warning {
			fmt.Fprintf(b, "  ! %s holds %d of %d images (%.1f%%); %d after this plan — pushes fail at the limit.\n",
				r.Repository, r.Images, r.Limit, r.UsedPct, r.After)
		}
		if r.Blocked != "" && r.Kept[reconcile.ClassProtected] == 0 {
			fmt.Fprintf(b, "  ! %s: no image is deleted this run: %s\n", r.Repository, r.Blocked)
		}
	}
	fmt.Fprintln(b)
}

// writeImages lists image decisions per repository: what goes and why, and
// for kept images the strongest reason, a few of each class.
func writeImages(b *strings.Builder, p *reconcile.Plan, opt TextOptions) {
	byRepo := map[string][]reconcile.Decision{}
	var repos []string
	for _, d := range p.Decisions {
		if d.Kind != reconcile.KindImage {
			continue
		}
		if _, ok := byRepo[d.Repository]; !ok {
			repos = append(repos, d.Repository)
		}
		byRepo[d.Repository] = append(byRepo[d.Repository], d)
	}
	if len(repos) == 0 {
		return
	}
	sort.Strings(repos)
	fmt.Fprintln(b, "ECR IMAGES")
	const maxChanges = 25
	for _, repo := range repos {
		fmt.Fprintf(b, "  %s\n", repo)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		shown, more := map[string]int{}, map[string]int{}
		for _, d := range byRepo[repo] {
			key := string(d.Action)
			limit := maxChanges
			if d.Action == reconcile.Keep {
				key, limit = d.Class, opt.MaxKept
			}
			if limit >= 0 && shown[key] >= limit {
				more[key]++
				continue
			}
			shown[key]++
			tags := strings.Join(d.Tags, ",")
			if tags == "" {
				tags = "<untagged>"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", strings.ToUpper(string(d.Action)), reconcile.ShortDigest(d.Digest), tags, bytesString(d.Bytes), d.Reason)
		}
		tw.Flush()
		for _, k := range sortedByCount(more) {
			word := "KEEP " + k
			if k == string(reconcile.Delete) || k == string(reconcile.Mark) {
				word = strings.ToUpper(k)
			}
			fmt.Fprintf(b, "    %s: %d more\n", word, more[k])
		}
	}
	fmt.Fprintln(b)
}

// bytesString prints a size the way registries do: 1.2 GB, 340 MB.
func bytesString(n int64) string {
	switch {
	case n == 0:
		return "-"
	case n >= 1e12:
		return fmt.Sprintf("%.1f TB", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
