package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
)

// Users says, as data, who could use a candidate. The engine derives from
// it the source keys that hold the candidate while any of them is
// incomplete or unread (Keys); no kind builds those keys by hand.
type Users struct {
	// Clusters could use it, read or not, by fleet name; Members too, as
	// the cloud's evidence names them (the EKS clusters of an account, the
	// GKE clusters of a project).
	Clusters []string
	Members  []inventory.FleetMember
	// Reads are what of each of those clusters the evidence comes from: the
	// collector's shared reads (inventory.ReadImages, ReadWorkloads) or a
	// kind's tap. A cluster read without one holds the candidate.
	Reads []string
	// Scopes are the discovery scopes ("eks ACCOUNT/REGION", "gke PROJECT")
	// that could hide more such clusters: with fleet discovery on, a scope
	// whose listing failed, or that no listing covered, holds it.
	Scopes []string
}

// Keys are the source keys u relies on, each once.
func (u Users) Keys(f *inventory.Fleet) []string {
	var out []string
	add := func(c string) {
		out = append(out, inventory.ClusterKey(c))
		for _, r := range u.Reads {
			out = append(out, inventory.TapKey(r, c))
		}
	}
	for _, c := range u.Clusters {
		add(c)
	}
	for _, m := range u.Members {
		add(m.Name)
	}
	if f != nil && f.Discovery {
		// A scope no discovery listing covers is named all the same: no
		// source answers for it, so it holds (a cluster may live there unseen).
		for _, s := range u.Scopes {
			platform, scope, _ := strings.Cut(s, " ")
			out = append(out, inventory.DiscoveryKey(platform, scope))
		}
	}
	return inventory.UniqueKeys(out)
}

// unitOutOfScope is the unit of a cluster's source when the cluster is
// declared out of scope: complete, though never read.
const unitOutOfScope = "declared out of scope"

// addFleet registers the fleet's sources: every member reclaim did not read
// is a source that is never complete (a decision relying on it is held and
// names it), an out-of-scope declaration one that is, and each discovery
// listing one. It also puts the fleet section first in the plan.
func (p *Plan) addFleet(f *inventory.Fleet, clusters []inventory.ClusterRefs, add func(Source)) {
	configured := len(clusters)
	// A fleet source that is not complete holds decisions (and then makes
	// the run incomplete); by itself it does not.
	if f == nil {
		return
	}
	if !f.Discovery {
		p.Notices = append(p.Notices, fmt.Sprintf("fleet discovery is off (fleet.discover: false): the fleet is the %d cluster(s) the config lists, and a cluster missing from it makes what it uses look unused", configured))
	}
	for _, l := range f.Listings {
		s := Source{Kind: inventory.SourceDiscovery, Name: l.Platform + " " + l.Scope, Complete: l.Complete, Items: len(l.Clusters), Unit: "clusters"}
		if l.Platform == inventory.Regions {
			s.Items, s.Unit = len(l.Regions), "regions"
			if len(l.LeftOut) > 0 {
				p.Notices = append(p.Notices, fmt.Sprintf("regions %s of account %s are enabled but left out by fleet.regions: reclaim treats them as unused, and nothing a cluster or service there runs is protected", strings.Join(l.LeftOut, ", "), l.Scope))
			}
		}
		if !l.Complete {
			s.Problems = []string{l.Problem}
			p.Blocked = append(p.Blocked, fmt.Sprintf("discovery of %s %s failed (%s): nothing a cluster there could use is deleted this run", l.Platform, l.Scope, l.Problem))
		}
		add(s)
	}
	for _, m := range f.Members {
		switch m.State {
		case inventory.MemberRead:
			continue // its collection is its source
		case inventory.MemberOutOfScope:
			add(Source{Kind: inventory.SourceCluster, Name: m.Name, Complete: true, Unit: unitOutOfScope})
			p.Notices = append(p.Notices, fmt.Sprintf("cluster %s is declared out of scope (fleet.outOfScope): %s — reclaim does not read it, and what it uses is not protected", m.Name, m.Reason))
		default:
			add(Source{Kind: inventory.SourceCluster, Name: m.Name, Problems: []string{unreadWhy(m)}, Unit: "not read", NotRead: true})
		}
	}
	sec := fleetSection(f, clusters)
	for _, n := range p.Notices {
		sec.Blocks[0].Lines = append(sec.Blocks[0].Lines, "  NOTE: "+n)
	}
	p.Sections = append(p.Sections, sec)
}

// addNotice adds what every report repeats, after the fleet section was
// made (a kind's declaration it relied on): the section shows it too.
func (p *Plan) addNotice(n string) {
	p.Notices = append(p.Notices, n)
	for i := range p.Sections {
		if s := &p.Sections[i]; s.Key == "fleet" && len(s.Blocks) > 0 {
			s.Blocks[0].Lines = append(s.Blocks[0].Lines, "  NOTE: "+n)
		}
	}
}

// unreadWhy says why a member was not read, and how to resolve it.
func unreadWhy(m inventory.FleetMember) string {
	where := ""
	if m.Cloud.Platform != "" {
		where = fmt.Sprintf(" (%s %s)", m.Cloud.Platform, m.Cloud.Scope())
	}
	fix := "read it (add it to clusters[], or let discovery read it), or declare it in fleet.outOfScope with its platform, account or project, location and a reason"
	switch m.State {
	case inventory.MemberConflict:
		if m.Cloud.Platform == "" {
			return "not read: " + m.Reason
		}
		return fmt.Sprintf("discovered%s but not read: %s", where, m.Reason)
	case inventory.MemberExcluded:
		return fmt.Sprintf("discovered%s but excluded by %s, so not read: %s", where, m.Rule, fix)
	case inventory.MemberUnlisted:
		return fmt.Sprintf("discovered%s but not in the config (%s), so not read: %s", where, m.Rule, fix)
	}
	return fmt.Sprintf("not read%s: %s", where, fix)
}

// StateFailed is a fleet row's state for a cluster reclaim tried to read but
// could not read completely.
const StateFailed = "failed"

// FleetRow is one cluster of the fleet section, as the JSON plan shows it.
type FleetRow struct {
	Name       string `json:"name"`
	Platform   string `json:"platform,omitempty"`
	Scope      string `json:"scope,omitempty"`
	Location   string `json:"location,omitempty"`
	Configured bool   `json:"configured"`
	Discovered bool   `json:"discovered"`
	State      string `json:"state"`
	Rule       string `json:"rule,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// fleetSection shows every cluster: which exist, which were read, which were
// excluded and by which rule, which are out of scope. Whether a read one was
// complete is the sources' business.
func fleetSection(f *inventory.Fleet, clusters []inventory.ClusterRefs) layout.Section {
	failed := map[string]string{}
	for _, c := range clusters {
		if !c.Complete {
			failed[c.Name] = strings.Join(c.Problems, "; ")
		}
	}
	rows := make([]FleetRow, 0, len(f.Members))
	b := layout.Block{Header: []string{"CLUSTER", "PLATFORM", "WHERE", "HOW KNOWN", "STATE", "WHY"}, Indent: 2}
	counts := map[string]int{}
	for _, m := range f.Members {
		r := FleetRow{Name: m.Name, Platform: m.Cloud.Platform, Location: m.Cloud.Location, Configured: m.Configured,
			Discovered: m.Discovered, State: m.State, Rule: m.Rule, Reason: m.Reason}
		why := m.Rule
		if problem, ok := failed[m.Name]; ok && m.State == inventory.MemberRead {
			// Read, but not completely: it holds what it could use.
			r.State, r.Reason, why = StateFailed, problem, problem
		}
		if m.Cloud.Platform != "" {
			r.Scope = m.Cloud.Scope()
		}
		rows = append(rows, r)
		counts[r.State]++
		known := []string{}
		if m.Configured {
			known = append(known, "config")
		}
		if m.Discovered {
			known = append(known, "discovered")
		}
		if len(known) == 0 {
			known = append(known, "declared")
		}
		if m.State == inventory.MemberOutOfScope || m.State == inventory.MemberConflict {
			why = m.Reason
		}
		// WHERE is the account or project and the location, once each:
		// what discovery listed, else what the config declares.
		platform, where := m.Cloud.Platform, placeText(m.Cloud.Account+m.Cloud.Project, m.Cloud.Location)
		if platform == "" {
			platform, where = m.Where.Platform, placeText(m.Where.Account+m.Where.Project, m.Where.Location)
		}
		b.Rows = append(b.Rows, []string{m.Name, orDefault(platform, "-"), where, strings.Join(known, "+"), strings.ToUpper(r.State), orDefault(why, "-")})
	}
	disc := "discovery off"
	if f.Discovery {
		disc = fmt.Sprintf("%d discovery scope(s)", len(f.Listings))
	}
	conflicts := ""
	if n := counts[inventory.MemberConflict]; n > 0 {
		conflicts = fmt.Sprintf(", %d in conflict", n)
	}
	b.Lines = append(b.Lines, fmt.Sprintf("  %d cluster(s): %d read, %d failed, %d excluded, %d discovered but not in the config, %d out of scope%s; %s",
		len(f.Members), counts[inventory.MemberRead], counts[StateFailed], counts[inventory.MemberExcluded], counts[inventory.MemberUnlisted], counts[inventory.MemberOutOfScope], conflicts, disc))
	return layout.Section{Key: "fleet", Data: rows, Title: "FLEET", Place: layout.Overview, Blocks: []layout.Block{b}}
}

// addUnseen lists, in the fleet section and the run's held-back notes, the
// clusters the cloud's evidence named that reclaim neither read nor knows
// (a subnet tag, an interface's or a disk's cluster tag).
func (p *Plan) addUnseen() {
	for _, s := range slices.Sorted(maps.Keys(p.unlisted)) {
		p.Blocked = append(p.Blocked, fmt.Sprintf("discovery does not look in %s, where the cloud has resources a cluster may use: nothing there that a cluster could use is deleted this run — add it to fleet.eks or fleet.gke.projects", s))
	}
	if len(p.unseen) == 0 {
		return
	}
	names := slices.Sorted(maps.Keys(p.unseen))
	for _, n := range names {
		p.Blocked = append(p.Blocked, fmt.Sprintf("cluster %s is named by the cloud's evidence but not read: nothing it may use is deleted this run — add it to clusters[], or declare it in fleet.outOfScope with its platform, account or project, location and a reason", n))
	}
	for i := range p.Sections {
		s := &p.Sections[i]
		if s.Key != "fleet" {
			continue
		}
		rows, _ := s.Data.([]FleetRow)
		for _, n := range names {
			rows = append(rows, FleetRow{Name: n, State: "not-read", Rule: "named by cloud evidence"})
			s.Blocks[0].Rows = append(s.Blocks[0].Rows, []string{n, "-", "-", "cloud evidence", "NOT READ", "holds what it may use: add it to clusters[] or fleet.outOfScope"})
		}
		s.Data = rows
	}
}

// addTaps registers each tap's pass over c as a source of its own: a failed
// pass holds what relies on it, not the cluster's other kinds. The
// collector's own reads (images, workloads) are not sources, but hold what
// names them when the cluster was not asked for them.
func (p *Plan) addTaps(c inventory.ClusterRefs, add func(Source)) {
	if p.reads == nil {
		p.reads = map[string]bool{}
	}
	for name, asked := range c.Reads() {
		p.reads[inventory.TapKey(name, c.Name)] = asked
	}
	for _, name := range slices.Sorted(maps.Keys(c.Taps)) {
		t := c.Taps[name]
		s := Source{Kind: inventory.SourceTap + " " + name, Name: c.Name, Complete: t.Complete, Items: t.Items, Unit: name}
		if !t.Complete {
			s.Problems = []string{t.Problem}
		}
		if !t.Complete && c.Complete { // an incomplete cluster says so once
			p.Blocked = append(p.Blocked, fmt.Sprintf("%s of cluster %s could not be read (%s): nothing that relies on it is deleted this run", name, c.Name, t.Problem))
		}
		add(s)
	}
}

// placeText is "account-or-project location", with what is known of them.
func placeText(scope, location string) string {
	return orDefault(strings.TrimSpace(scope+" "+location), "-")
}
