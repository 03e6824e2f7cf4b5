package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
)

// Plan is the whole outcome of planning one run. It is data: dry-run prints it.
type Plan struct {
	Version     string
	GeneratedAt time.Time
	Sources     []Source
	Decisions   []Decision
	// Sections are what the plan shows (the fleet; then what kinds show of
	// it, headroom, repositories, ..., added by notify/report's Show);
	// those with a Key appear in the JSON plan under that key.
	Sections []layout.Section
	// Warnings are what a person must act on, most urgent first: sooner
	// exhaustion first, then those with no projection, in kind order
	// (report.Show adds the kinds').
	Warnings []layout.Warning
	// Currency names the unit of the decisions' Frees.Cost.
	Currency string
	// Summaries are one phrase per kind for the report's summary line
	// (report.Show).
	Summaries []string
	// Gauges are the kinds' metric samples of this plan (report.Show).
	Gauges []layout.Gauge
	// Blocked lists why some deletions were held back for the whole run.
	Blocked []string
	// Notices are what every report repeats whatever the plan: discovery
	// off, clusters declared out of scope.
	Notices []string
	// BreakerTripped is set when too many resources were due at once.
	BreakerTripped bool
	// Incomplete is true if any source was incomplete.
	Incomplete bool
	// State is the state to save after this run (clocks, usage history).
	State State
	// Confirmed are deletions of an earlier, interrupted run now known to be done.
	Confirmed []string

	confirmations []confirmation
	sourceAt      map[string]int
	// unseen are clusters the cloud's evidence named that no source answers for.
	unseen map[string]bool
	// unlisted are discovery scopes the cloud's resources are in that no
	// discovery listing covers.
	unlisted map[string]bool
	// reads are the collector's own reads of each cluster (images,
	// workloads) by inventory.TapKey: false when the cluster was not asked for it.
	// They hold what names them without being sources of their own.
	reads map[string]bool
	// routed are the owners notify.routes names (Settings.Routes): only their own
	// reports give notice of their candidates.
	routed map[string]bool
	// compact are the decisions kept as rows (Proposal.Remake): All
	// yields them with Decisions.
	compact rowsOf
	// fresh is what the applier checks again right before each delete
	// (Settings.FreshViews); nil when no due delete relies on a cluster's
	// view under the rule.
	fresh *freshViews
}

type confirmation struct {
	id      string
	pending Pending
}

// Count returns how many decisions of kind have the action.
func (p *Plan) Count(kind string, a Action) (n int) {
	for i := range p.Decisions {
		if p.Decisions[i].Kind == kind && p.Decisions[i].Action == a {
			n++
		}
	}
	rs := &p.compact
	for j := range rs.n {
		if w := rs.at(j); rs.srcs[w.src].kind == kind && rs.lookAt(w).action() == a {
			n++
		}
	}
	return n
}

// Unready says which of the sources (by key) were not read, or not
// completely: what a decision relying on them may not trust. "" when all were.
func (p *Plan) Unready(keys []string) string {
	var parts []string
	for _, key := range keys {
		i, known := p.sourceIndex(key)
		switch {
		case !known && strings.HasPrefix(key, inventory.SourceCluster+":"):
			if p.unseen == nil {
				p.unseen = map[string]bool{}
			}
			p.unseen[strings.TrimPrefix(key, inventory.SourceCluster+":")] = true
			parts = append(parts, "cluster "+strings.TrimPrefix(key, inventory.SourceCluster+":")+" was not read, yet the cloud says it may use this (add it to clusters[] — with discovery on, an entry of that name must say where it lives: platform, account or project, location — or declare it in fleet.outOfScope with its platform, account or project, location and a reason)")
		case !known && strings.HasPrefix(key, inventory.SourceDiscovery+":"):
			scope := strings.TrimPrefix(key, inventory.SourceDiscovery+":")
			if p.unlisted == nil {
				p.unlisted = map[string]bool{}
			}
			p.unlisted[scope] = true
			parts = append(parts, "discovery does not look in "+scope+", so a cluster there that may use this is unseen (add it to fleet.eks or fleet.gke.projects)")
		case !known:
			if asked, read := p.reads[key]; read && !asked {
				parts = append(parts, notAsked(key))
			} else if !read && !p.saidByItsCluster(key, keys) && !p.declaredOut(key) {
				parts = append(parts, key+" was not read")
			}
		case p.Sources[i].NotRead:
			parts = append(parts, p.Sources[i].Kind+" "+p.Sources[i].Name+" is "+strings.Join(p.Sources[i].Problems, "; "))
		case !p.Sources[i].Complete:
			parts = append(parts, p.Sources[i].Kind+" "+p.Sources[i].Name+" could not be read completely")
		}
	}
	return strings.Join(parts, "; ")
}

// saidByItsCluster: key is an inventory.TapKey of a cluster reclaim did not read at
// all, and keys name that cluster too, which says so (once). A tap key
// without its cluster's is still "not read": never a silent pass.
func (p *Plan) saidByItsCluster(key string, keys []string) bool {
	if !strings.HasPrefix(key, inventory.SourceTap+" ") {
		return false
	}
	_, cluster, _ := strings.Cut(key, ":")
	_, read := p.sourceIndex(inventory.ClusterKey(cluster))
	return !read && slices.Contains(keys, inventory.ClusterKey(cluster))
}

// declaredOut: key is an inventory.TapKey of a cluster declared out of scope
// (fleet.outOfScope): the declaration answers for its reads too, as it
// does for the cluster.
func (p *Plan) declaredOut(key string) bool {
	if !strings.HasPrefix(key, inventory.SourceTap+" ") {
		return false
	}
	_, cluster, _ := strings.Cut(key, ":")
	i, ok := p.sourceIndex(inventory.ClusterKey(cluster))
	return ok && p.Sources[i].Unit == unitOutOfScope && p.Sources[i].Complete
}

// notAsked says that a cluster was read without one of the collector's
// own reads (an inventory.TapKey of it).
func notAsked(key string) string {
	what, cluster, _ := strings.Cut(strings.TrimPrefix(key, inventory.SourceTap+" "), ":")
	return "cluster " + cluster + " was not asked for its " + what
}

// setSource replaces the source of s's key (or adds it); an incomplete one
// makes the plan incomplete.
func (p *Plan) setSource(s Source) {
	if i, ok := p.sourceIndex(s.Key()); ok {
		p.Sources[i] = s
	} else {
		p.sourceAt[s.Key()] = len(p.Sources)
		p.Sources = append(p.Sources, s)
	}
	if !s.Complete {
		p.Incomplete = true
	}
}

func (p *Plan) sourceIndex(key string) (int, bool) {
	if p.sourceAt == nil {
		p.sourceAt = make(map[string]int, len(p.Sources))
		for i, s := range p.Sources {
			p.sourceAt[s.Key()] = i
		}
	}
	i, ok := p.sourceAt[key]
	return i, ok
}

type planHead struct {
	Version     string           `json:"version"`
	GeneratedAt time.Time        `json:"generatedAt"`
	Currency    string           `json:"currency,omitempty"`
	Warnings    []layout.Warning `json:"warnings,omitempty"`
	Sources     []Source         `json:"sources"`
	Decisions   []Decision       `json:"decisions"`
}

type planTail struct {
	Blocked        []string `json:"blocked,omitempty"`
	Notices        []string `json:"notices,omitempty"`
	BreakerTripped bool     `json:"breakerTripped"`
	Incomplete     bool     `json:"incomplete"`
	Confirmed      []string `json:"confirmed,omitempty"`
}

// MarshalJSON writes the plan with each keyed section at the top level.
func (p *Plan) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	decisions := p.Decisions
	if p.compact.n > 0 {
		decisions = make([]Decision, 0, p.Len())
		for d := range p.All() {
			decisions = append(decisions, *d)
		}
	}
	head, err := json.Marshal(planHead{p.Version, p.GeneratedAt, p.Currency, p.Warnings, p.Sources, decisions})
	if err != nil {
		return nil, err
	}
	b.Write(head[:len(head)-1])
	for _, s := range p.Sections {
		if s.Key == "" {
			continue
		}
		k, _ := json.Marshal(s.Key)
		v, err := json.Marshal(s.Data)
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	tail, err := json.Marshal(planTail{p.Blocked, p.Notices, p.BreakerTripped, p.Incomplete, p.Confirmed})
	if err != nil {
		return nil, err
	}
	b.WriteByte(',')
	b.Write(tail[1:])
	return b.Bytes(), nil
}

// WriteJSON writes what MarshalJSON does, indented as json.Encoder with
// SetIndent(prefix, indent) indents a value at that depth, one decision at
// a time: a plan of 200,000 decisions is never held encoded whole (the
// encoder would hold it three times: marshalled, checked and indented).
func (p *Plan) WriteJSON(w io.Writer, prefix, indent string) error {
	o := layout.NewJSONObject(w, prefix, indent)
	o.Field("version", p.Version)
	o.Field("generatedAt", p.GeneratedAt)
	if p.Currency != "" {
		o.Field("currency", p.Currency)
	}
	if len(p.Warnings) > 0 {
		o.Field("warnings", p.Warnings)
	}
	o.Field("sources", p.Sources)
	o.Stream("decisions", func(inner string, write func([]byte) error) error {
		if p.Decisions == nil && p.compact.n == 0 {
			return write([]byte("null"))
		}
		if p.Len() == 0 {
			return write([]byte("[]"))
		}
		if err := write([]byte("[")); err != nil {
			return err
		}
		var buf bytes.Buffer
		first := true
		for d := range p.All() {
			b, err := json.Marshal(d)
			if err != nil {
				return err
			}
			buf.Reset()
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.WriteString("\n" + inner + indent)
			if err := json.Indent(&buf, b, inner+indent, indent); err != nil {
				return err
			}
			if err := write(buf.Bytes()); err != nil {
				return err
			}
		}
		return write([]byte("\n" + inner + "]"))
	})
	for _, s := range p.Sections {
		if s.Key != "" {
			o.Field(s.Key, s.Data)
		}
	}
	if len(p.Blocked) > 0 {
		o.Field("blocked", p.Blocked)
	}
	if len(p.Notices) > 0 {
		o.Field("notices", p.Notices)
	}
	o.Field("breakerTripped", p.BreakerTripped)
	o.Field("incomplete", p.Incomplete)
	if len(p.Confirmed) > 0 {
		o.Field("confirmed", p.Confirmed)
	}
	return o.Close()
}

// RowMark is how a table marks a decision's row (layout.Block.Add): its
// action, and a kept one's class.
func (d *Decision) RowMark() (action, class string) {
	if d.Action == Keep {
		class = d.Class
	}
	return strings.ToUpper(string(d.Action)), class
}
