// Package notify renders what a run decided and did: text for a terminal and
// JSON with a stable, versioned schema.
package notify

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"reclaim.dev/reclaim/reconcile"
)

// Report is one run: its plan and, after apply, what happened.
type Report struct {
	Version string `json:"version"`
	// Mode is "dry-run" or "apply".
	Mode    string             `json:"mode"`
	Plan    *reconcile.Plan    `json:"plan"`
	Outcome *reconcile.Outcome `json:"outcome,omitempty"`
	// ExitCode is what the process exits with; see ExitCode.
	ExitCode int `json:"exitCode"`
	// LastSuccess is when a run last exited 0 (this one, if it did).
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
}

// Exit statuses a CronJob can tell apart.
const (
	ExitOK         = 0 // every source complete, every planned delete done
	ExitError      = 1 // the run could not happen (bad config, no state store, ...)
	ExitIncomplete = 3 // the run finished, but deletions were held back: a source was incomplete, or the breaker tripped
	ExitFailed     = 4 // some deletes failed
)

// ExitCode gives the exit status: failed deletes outrank incomplete sources.
func ExitCode(p *reconcile.Plan, o *reconcile.Outcome) int {
	switch {
	case o != nil && (o.Failed > 0 || o.Stopped != ""):
		return ExitFailed
	case p.Incomplete || p.BreakerTripped:
		return ExitIncomplete
	}
	return ExitOK
}

// New makes the report of a run.
func New(p *reconcile.Plan, o *reconcile.Outcome, apply bool) *Report {
	mode := "dry-run"
	if apply {
		mode = "apply"
	}
	return &Report{Version: reconcile.SchemaVersion, Mode: mode, Plan: p, Outcome: o, ExitCode: ExitCode(p, o)}
}

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// TextOptions tune the text report.
type TextOptions struct {
	// MaxKept limits the kept resources listed one per line for each kind of
	// reason; the rest are counted. 0 lists none, -1 lists all.
	MaxKept int
}

// Text writes the report for a person at a terminal.
func (r *Report) Text(w io.Writer, opt TextOptions) error {
	p := r.Plan
	b := &strings.Builder{}
	if r.Mode == "dry-run" {
		fmt.Fprintf(b, "reclaim dry-run at %s — nothing was deleted; run with --apply to delete what is marked DELETE\n\n", p.GeneratedAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(b, "reclaim apply at %s\n\n", p.GeneratedAt.UTC().Format(time.RFC3339))
	}
	writeHeadroom(b, p)
	writeRepositories(b, p)
	writeHolders(b, p)
	writeSources(b, p)
	if len(p.Blocked) > 0 {
		fmt.Fprintln(b, "HELD BACK THIS RUN")
		for _, s := range p.Blocked {
			fmt.Fprintf(b, "  ! %s\n", s)
		}
		fmt.Fprintln(b)
	}
	writeDecisions(b, p, reconcile.KindDisk, "GCE DISKS", opt)
	writeDecisions(b, p, reconcile.KindPVC, "PVCs OF FINISHED ARGO WORKFLOWS", opt)
	writeImages(b, p, opt)
	if p.Count(reconcile.KindPVC, reconcile.Report) > 0 {
		fmt.Fprintln(b, "  PVCs marked REPORT are only reported: set disks.deleteWorkflowPVCs: true to let reclaim delete them after the grace period")
		fmt.Fprintln(b, "  (their PVs and disks follow when the reclaim policy is Delete), or delete the finished Workflows.")
		fmt.Fprintln(b)
	}
	if o := r.Outcome; o != nil {
		writeOutcome(b, o)
	}
	for _, id := range p.Confirmed {
		fmt.Fprintf(b, "confirmed: %s was deleted by an earlier, interrupted run\n", id)
	}
	fmt.Fprintln(b, summary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

func summary(r *Report) string {
	p := r.Plan
	s := fmt.Sprintf("summary: disks delete %d, mark %d, report %d, keep %d; PVCs delete %d, report %d",
		p.Count(reconcile.KindDisk, reconcile.Delete), p.Count(reconcile.KindDisk, reconcile.Mark),
		p.Count(reconcile.KindDisk, reconcile.Report), p.Count(reconcile.KindDisk, reconcile.Keep),
		p.Count(reconcile.KindPVC, reconcile.Delete), p.Count(reconcile.KindPVC, reconcile.Report))
	if len(p.Repositories) > 0 {
		var freed int64
		for _, rs := range p.Repositories {
			freed += rs.FreedBytes
		}
		s += fmt.Sprintf("; images delete %d (%s), mark %d", p.Count(reconcile.KindImage, reconcile.Delete), bytesString(freed),
			p.Count(reconcile.KindImage, reconcile.Mark))
	}
	if o := r.Outcome; o != nil {
		s += fmt.Sprintf("; applied: deleted %d (%d GB", o.Deleted, o.FreedGB)
		if o.FreedBytes > 0 {
			s += ", " + bytesString(o.FreedBytes) + " of images"
		}
		s += fmt.Sprintf("), skipped %d, failed %d", o.Skipped, o.Failed)
	}
	switch r.ExitCode {
	case ExitIncomplete:
		s += "\nexit 3: deletions were held back (an incomplete source, or the breaker): see HELD BACK THIS RUN"
	case ExitFailed:
		s += "\nexit 4: some deletes failed"
	}
	return s
}

func writeHeadroom(b *strings.Builder, p *reconcile.Plan) {
	if len(p.Headroom) == 0 {
		return
	}
	fmt.Fprintln(b, "QUOTA HEADROOM")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  PROJECT\tREGION\tMETRIC\tUSAGE/LIMIT GB\tUSED\tPLAN FREES\tUSED AFTER\tORPHAN DISKS\tFINISHED-WORKFLOW PVCs")
	for _, h := range p.Headroom {
		if !h.Known {
			fmt.Fprintf(tw, "  %s\t%s\t%s\tunknown\t\t%s\t\t%s\t%s\n", h.Project, h.Region, h.Metric, gb(h.PlanFrees), gb(h.OrphanGB), gb(h.FinishedWorkflowGB))
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%.0f/%.0f\t%s\t%s\t%s\t%s\t%s\n", h.Project, h.Region, h.Metric, h.Usage, h.Limit,
			pct(h.UsedPct), gb(h.PlanFrees), pct(h.UsedPctAfter), gb(h.OrphanGB), gb(h.FinishedWorkflowGB))
	}
	tw.Flush()
	for _, h := range p.Headroom {
		switch {
		case !h.Known:
			fmt.Fprintf(b, "  ? %s %s %s is unknown: %s\n", h.Project, h.Region, h.Metric, h.Problem)
		case h.Warning:
			fmt.Fprintf(b, "  ! %s %s %s is %s used (%.0f of %.0f GB), %s after this plan.", h.Project, h.Region, h.Metric, pct(h.UsedPct), h.Usage, h.Limit, pct(h.UsedPctAfter))
			if h.FinishedWorkflowGB > 0 {
				fmt.Fprintf(b, " PVCs of finished workflows hold %s: deleting those workflows (or setting disks.deleteWorkflowPVCs) frees it.", gb(h.FinishedWorkflowGB))
			}
			fmt.Fprintln(b)
		}
		if h.RunsOutAt != nil {
			fmt.Fprintf(b, "  ! %s %s %s grows %.0f GB a day: full around %s at this rate.\n", h.Project, h.Region, h.Metric, h.GrowthPerDay, h.RunsOutAt.UTC().Format("2006-01-02 15:04 MST"))
		}
	}
	fmt.Fprintln(b)
}

func writeHolders(b *strings.Builder, p *reconcile.Plan) {
	if len(p.Holders) == 0 {
		return
	}
	fmt.Fprintln(b, "WHO HOLDS THE QUOTA: PVCs of finished Argo Workflows that no running pod mounts")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLUSTER\tNAMESPACE\tWORKFLOW\tPHASE\tPVCs\tGB")
	type nsKey struct{ c, ns string }
	byNS := map[nsKey]int64{}
	for i, h := range p.Holders {
		byNS[nsKey{h.Cluster, h.Namespace}] += h.GB
		if i < 15 {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\n", h.Cluster, h.Namespace, h.Workflow, h.Phase, h.PVCs, h.GB)
		}
	}
	if len(p.Holders) > 15 {
		fmt.Fprintf(tw, "  …\t\t%d more workflows\t\t\t\n", len(p.Holders)-15)
	}
	tw.Flush()
	keys := make([]nsKey, 0, len(byNS))
	for k := range byNS {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return byNS[keys[i]] > byNS[keys[j]] })
	fmt.Fprint(b, "  by namespace:")
	for _, k := range keys {
		fmt.Fprintf(b, " %s/%s %d GB;", k.c, k.ns, byNS[k])
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b)
}

func writeSources(b *strings.Builder, p *reconcile.Plan) {
	fmt.Fprintln(b, "SOURCES")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, s := range p.Sources {
		unit := "PV references"
		switch s.Kind {
		case "gce-project":
			unit = "disks"
		case "ecr-registry":
			unit = "repositories"
		case "manifests":
			unit = "image references"
		}
		state := "complete"
		if !s.Complete {
			state = "INCOMPLETE"
		}
		dur := ""
		if s.Duration > 0 {
			dur = s.Duration.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%d %s\t%s\n", s.Kind, s.Name, state, s.Items, unit, dur)
		for _, pr := range s.Problems {
			fmt.Fprintf(tw, "    - %s\n", pr)
		}
	}
	tw.Flush()
	fmt.Fprintln(b)
}

func writeDecisions(b *strings.Builder, p *reconcile.Plan, kind, title string, opt TextOptions) {
	var ds []reconcile.Decision
	for _, d := range p.Decisions {
		if d.Kind == kind {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(b, "%s\n", title)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	shown := map[string]int{}
	keptBy := map[string]int{}
	for _, d := range ds {
		if d.Action == reconcile.Keep {
			// A few of each kind of reason, so every story is visible.
			class := reasonClass(d.Reason)
			if opt.MaxKept >= 0 && shown[class] >= opt.MaxKept {
				keptBy[class]++
				continue
			}
			shown[class]++
		}
		name := d.ID
		if kind == reconcile.KindPVC {
			name = d.Cluster + "/" + d.Location + "/" + d.Name
		}
		extra := ""
		if d.Owner != "" && d.Action != reconcile.Keep {
			extra = " [" + d.Owner + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d GB %s\t%s%s\n", strings.ToUpper(string(d.Action)), name, d.SizeGB, d.Type, d.Reason, extra)
	}
	tw.Flush()
	if len(keptBy) > 0 {
		for _, k := range sortedByCount(keptBy) {
			fmt.Fprintf(b, "  KEEP  %d more: %s\n", keptBy[k], k)
		}
	}
	fmt.Fprintln(b)
}

// reasonClass shortens a keep reason to its kind, for counting.
func reasonClass(r string) string {
	for _, prefix := range []string{"attached to instance", "referenced by PV", "mounted inline", "protected by label", "outside the configured scope", "already being deleted", "mounted by pod", "Workflow"} {
		if strings.HasPrefix(r, prefix) {
			return prefix
		}
	}
	return r
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func writeOutcome(b *strings.Builder, o *reconcile.Outcome) {
	fmt.Fprintln(b, "APPLIED")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, r := range o.Results {
		msg := r.Reason
		if r.Error != "" {
			msg = r.Error
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", strings.ToUpper(r.Result), r.ID, msg)
	}
	tw.Flush()
	if o.Stopped != "" {
		fmt.Fprintf(b, "  ! %s\n", o.Stopped)
	}
	fmt.Fprintln(b)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func gb(f float64) string {
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f GB", f)
}
