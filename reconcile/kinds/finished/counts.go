package finished

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Addresses is what a finished Job's or Pod's deletion frees on Fargate,
// and an unused network interface's: subnet addresses.
var Addresses = &amount.Unit{Name: "subnet addresses", Say: func(n int64) string {
	if n == 1 {
		return "1 subnet address"
	}
	return fmt.Sprintf("%d subnet addresses", n)
}}

// Count is one cluster and namespace's finished objects of a kind, reported
// on every run, even when nothing is deleted.
type Count struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Finished  int    `json:"finished"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	// PastRetention are finished ones past their retention (whether or not
	// something else keeps them).
	PastRetention int `json:"pastRetention"`
	// Delete is what this run's plan deletes.
	Delete int `json:"delete"`
}

// Counter adds up Counts.
type Counter map[[2]string]*Count

// Add counts one finished object.
func (c Counter) Add(cluster, namespace string, succeeded, past bool) {
	k := [2]string{cluster, namespace}
	n := c[k]
	if n == nil {
		n = &Count{Cluster: cluster, Namespace: namespace}
		c[k] = n
	}
	n.Finished++
	if succeeded {
		n.Succeeded++
	} else {
		n.Failed++
	}
	if past {
		n.PastRetention++
	}
}

// Sorted returns the counts, most finished first, with the plan's deletes
// of kind filled in.
func (c Counter) Sorted(p *engine.Plan, kind string) []Count {
	for d := range p.Of(kind) {
		if d.Action != engine.Delete {
			continue
		}
		det := DetailOf(d)
		if n := c[[2]string{det.Cluster, det.Namespace}]; n != nil {
			n.Delete++
		}
	}
	out := make([]Count, 0, len(c))
	for _, n := range c {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Finished != out[j].Finished {
			return out[i].Finished > out[j].Finished
		}
		return out[i].Cluster+"/"+out[i].Namespace < out[j].Cluster+"/"+out[j].Namespace
	})
	return out
}

// CountsSection shows the counts (key: e.g. "finishedJobs"), at most 20 rows.
func CountsSection(key, title, noun string, counts []Count) layout.Section {
	s := layout.Section{Key: key, Data: counts, Place: layout.Overview, Title: title}
	return layout.Table(s, len(counts), layout.Block{Indent: 2, Header: []string{"CLUSTER", "NAMESPACE", "FINISHED", "SUCCEEDED", "FAILED", "PAST RETENTION", "DELETE NOW"}}, func(b *layout.Block) {
		var tot Count
		for i, n := range counts {
			tot.Finished += n.Finished
			tot.PastRetention += n.PastRetention
			tot.Delete += n.Delete
			if i < 20 {
				b.Rows = append(b.Rows, []string{n.Cluster, n.Namespace, fmt.Sprint(n.Finished), fmt.Sprint(n.Succeeded), fmt.Sprint(n.Failed),
					fmt.Sprint(n.PastRetention), fmt.Sprint(n.Delete)})
			}
		}
		if len(counts) > 20 {
			b.Rows = append(b.Rows, []string{"…", fmt.Sprintf("%d more namespaces", len(counts)-20), "", "", "", "", ""})
		}
		b.Lines = []string{fmt.Sprintf("  %d finished %s, %d past retention, %d deleted by this plan.", tot.Finished, noun, tot.PastRetention, tot.Delete)}
	})
}

// CountGauges are the counts as metric samples (names: prefix_finished and
// prefix_past_retention).
func CountGauges(prefix string, counts []Count) []layout.Gauge {
	var out []layout.Gauge
	for _, n := range counts {
		l := []string{n.Cluster, n.Namespace}
		out = append(out, layout.Gauge{Name: prefix + "_finished", Labels: l, Value: float64(n.Finished)},
			layout.Gauge{Name: prefix + "_past_retention", Labels: l, Value: float64(n.PastRetention)})
	}
	return out
}

// CountGaugeDefs declares CountGauges' metrics.
func CountGaugeDefs(prefix, noun string) []layout.GaugeDef {
	l := []string{"cluster", "namespace"}
	return []layout.GaugeDef{
		{Name: prefix + "_finished", Labels: l, Help: "Finished " + noun + " (succeeded or failed) in scope, as listed by the last run."},
		{Name: prefix + "_past_retention", Labels: l, Help: "Finished " + noun + " past their retention, as listed by the last run."},
	}
}

// MaxRows is how many DELETE, MARK or REPORT rows of one kind the text
// report lists; the rest are counted (a backlog of 100,000 Jobs would
// otherwise bury the report). The JSON report has every decision.
const MaxRows = 25

// DecisionSection lists the plan's decisions of kind: at most MaxRows of
// each action that does something, the rest counted; kept ones a few per
// class (the report counts the rest).
func DecisionSection(p *engine.Plan, kind, title string) layout.Section {
	b := layout.Block{Indent: 2}
	more := map[engine.Action]int{}
	shown := map[engine.Action]int{}
	for d := range p.Of(kind) {
		if d.Action != engine.Keep && shown[d.Action] >= MaxRows {
			more[d.Action]++
			continue
		}
		shown[d.Action]++
		det := DetailOf(d)
		b.Add(d, det.Cluster+"/"+det.Namespace+"/"+d.Name, det.Status, d.Why())
	}
	if len(b.Rows) == 0 {
		return layout.Section{}
	}
	for _, a := range []engine.Action{engine.Delete, engine.Mark, engine.Report} {
		if more[a] > 0 {
			b.Lines = append(b.Lines, fmt.Sprintf("  %s  %d more (the JSON report, -o json, lists every one)", strings.ToUpper(string(a)), more[a]))
		}
	}
	return layout.Section{Title: title, Place: layout.Details, Blocks: []layout.Block{b}}
}

// Texts are what a kind's view says: its section key and titles, its noun
// and its metrics' prefix.
type Texts struct {
	Key, Title, DetailsTitle, Noun, GaugePrefix string
}

// View is a Jobs or Pods kind's view: the counts per cluster and namespace
// (every run), the decisions, the gauges and the summary phrase.
func View(p *engine.Plan, kind string, counts Counter, t Texts) layout.View {
	cs := counts.Sorted(p, kind)
	v := layout.View{Sections: []layout.Section{
		CountsSection(t.Key, t.Title, t.Noun, cs),
		DecisionSection(p, kind, t.DetailsTitle),
	}, Gauges: CountGauges(t.GaugePrefix, cs)}
	ips := 0
	for d := range p.Of(kind) {
		if d.Action == engine.Delete {
			ips += int(d.Frees.Of(Addresses))
		}
	}
	v.Summary = fmt.Sprintf("%s delete %d (frees %d subnet addresses), wait %d", t.Noun, p.Count(kind, engine.Delete), ips, p.Count(kind, engine.Mark))
	return v
}

// Object is what the view counts of one Job or Pod: whether it is finished
// (Done), its namespace and labels, whether it succeeded, when it finished
// and its retention annotation.
type Object struct {
	Done      bool
	Namespace string
	Labels    map[string]string
	Succeeded bool
	At        time.Time
	Retention string
}

// Tally counts every finished object in the policy's scope, per cluster and
// namespace, and whether it is past its retention at now.
func Tally[T any](snap *inventory.View, p *Policy, now time.Time, items func(*inventory.ClusterRefs) []T, of func(*T) Object) Counter {
	counts := Counter{}
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		list := items(c)
		for i := range list {
			f := of(&list[i])
			if !f.Done || !p.InScope(f.Namespace, f.Labels) {
				continue
			}
			v := p.Retain(f.Succeeded, f.At, f.Retention, now)
			counts.Add(c.Name, f.Namespace, f.Succeeded, v.Keep == "")
		}
	}
	return counts
}
