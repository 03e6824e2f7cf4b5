package ecrimage

import (
	"fmt"
	"sort"
	"strings"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// RepoSummary is one repository's count against its limit, and the plan for it.
type RepoSummary struct {
	Repository string `json:"repository"`
	Account    string `json:"account"`
	Region     string `json:"region"`
	Name       string `json:"name"`
	// Policy is the rule that applies; empty when none does (counted only).
	Policy    string `json:"policy,omitempty"`
	Images    int    `json:"images"`
	Limit     int    `json:"limit,omitempty"`
	HighWater int    `json:"highWater,omitempty"`
	Target    int    `json:"target,omitempty"`
	// Delete is what this run removes; Mark what is waiting (grace) or held.
	Delete     int   `json:"delete"`
	Mark       int   `json:"mark"`
	FreedBytes int64 `json:"freedBytes"`
	After      int   `json:"after"`
	// Kept counts kept images by the class of their strongest reason.
	Kept         map[string]int `json:"kept"`
	Complete     bool           `json:"complete"`
	Blocked      string         `json:"blocked,omitempty"`
	UsedPct      float64        `json:"usedPct"`
	UsedPctAfter float64        `json:"usedPctAfter"`
	Warning      bool           `json:"warning"`
}

// RepositoriesOf returns the plan's repository summaries.
func RepositoriesOf(p *engine.Plan) []RepoSummary {
	return layout.DataOf[[]RepoSummary](p.Sections, "repositories")
}

var repoLabels = []string{"registry", "repository"}

// Gauges are the kind's metrics.
var Gauges = []layout.GaugeDef{
	{Name: "reclaim_ecr_repository_images", Labels: repoLabels,
		Help: "Images in an ECR repository (manifests and indexes, as ECR counts them against the limit), as listed by the last run."},
	{Name: "reclaim_ecr_repository_image_limit", Labels: repoLabels,
		Help: "The image limit of an ECR repository, from the policy that applies to it. No series for repositories no policy covers."},
	{Name: "reclaim_ecr_repository_images_after_plan", Labels: repoLabels,
		Help: "Images an ECR repository would hold after the last run's planned deletions."},
	{Name: "reclaim_ecr_repository_plan_deletes", Labels: repoLabels,
		Help: "Images of an ECR repository the last run's plan deletes now (not counting those waiting for their grace period or held)."},
}

// keptOrder lists keep classes strongest first, for the KEPT column.
var keptOrder = []string{ClassInUse, ClassIndexChild, ClassProtectedTag, ClassPulled, ClassNewest, ClassYoung, ClassNotNeeded, ClassProtected, ClassNoPolicy}

// View shows each repository against its limit, the image decisions, and the
// repository gauges.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	// One pass over the decisions, seen as brief ones: of a backlog's
	// million, only the few thousand listed are made again.
	by, ds := repoTallies{}, newDecisionLists()
	for d := range p.Sift(Name, func(b *engine.Decision) bool {
		repo := repoOf(b)
		by.add(repo, b)
		return ds.lists(repo, b.Action)
	}) {
		ds.add(d, DetailOf(d))
	}
	sums := k.repositories(by, p, snap)
	var frees int64
	for _, r := range sums {
		frees += r.FreedBytes
	}
	v := layout.View{Sections: []layout.Section{repositoriesSection(sums), ds.section()},
		Summary: fmt.Sprintf("images delete %d (%s), mark %d", p.Count(Name, engine.Delete), layout.HumanBytes(frees), p.Count(Name, engine.Mark))}
	for _, r := range sums {
		if r.Warning {
			v.Warnings = append(v.Warnings, layout.Warning{Text: warningText(r), Pool: &layout.Pool{Used: float64(r.Images), Limit: float64(r.Limit),
				Frees: float64(r.Delete), Trend: trendKey(r), Name: r.Repository, Unit: "images"}})
		}
		l := []string{r.Account + "/" + r.Region, r.Name}
		v.Gauges = append(v.Gauges,
			layout.Gauge{Name: "reclaim_ecr_repository_images", Labels: l, Value: float64(r.Images)},
			layout.Gauge{Name: "reclaim_ecr_repository_images_after_plan", Labels: l, Value: float64(r.After)},
			layout.Gauge{Name: "reclaim_ecr_repository_plan_deletes", Labels: l, Value: float64(r.Delete)})
		if r.Limit > 0 {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_ecr_repository_image_limit", Labels: l, Value: float64(r.Limit)})
		}
	}
	return v
}

// repoTally counts one repository's decisions by what the plan does.
type repoTally struct {
	del, mark, decided int
	bytes              int64
	kept               map[string]int
}

// repoTallies are the tallies by repository.
type repoTallies map[string]*repoTally

// repoOf is the repository of d, brief (Plan.Brief) or whole: its Group,
// which a kept image's decision leaves empty.
func repoOf(d *engine.Decision) string {
	if d.Group != "" {
		return d.Group
	}
	return DetailOf(d).Repository
}

func (by repoTallies) add(repo string, d *engine.Decision) {
	a := by[repo]
	if a == nil {
		a = &repoTally{kept: map[string]int{}}
		by[repo] = a
	}
	a.decided++
	switch d.Action {
	case engine.Delete:
		a.del++
		a.bytes += d.Frees.Of(Bytes)
	case engine.Mark:
		a.mark++
	case engine.Keep:
		a.kept[d.Class]++
	}
}

// repositories counts each repository's images by what the plan does with
// them (by: the plan's decisions tallied).
func (k *Kind) repositories(by repoTallies, p *engine.Plan, snap *inventory.View) []RepoSummary {
	idx := indexImages(snap)
	out := []RepoSummary{}
	pc := newPullerCheck(snap, k.Policy.OutOfScopePullers)
	regs := RegistriesOf(snap)
	for ri := range regs {
		reg := &regs[ri]
		sources, holds := evidence(snap, reg, pc)
		unready := p.Unready(sources)
		for i := range reg.Repos {
			rl := &reg.Repos[i]
			if rl.Gone {
				continue // deleted while the registry was listed
			}
			s := RepoSummary{Repository: rl.Repo.String(), Account: rl.Repo.Account, Region: rl.Repo.Region, Name: rl.Repo.Name,
				Images: rl.Len(), Complete: rl.Complete, Kept: map[string]int{}}
			rule := k.Policy.rule(rl.Repo.Name)
			switch {
			case rule == nil:
				s.Kept[ClassNoPolicy] = s.Images
			case rule.Protect || rl.Protected:
				s.Policy, s.Limit, s.HighWater, s.Target = rule.Name, rule.Limit, rule.HighWater, rule.Target
				s.Kept[ClassProtected] = s.Images
				s.Blocked = "protected: policy " + rule.Name + " protects it"
				if rl.Protected {
					s.Blocked = "protected: its protect tag opts it out"
				}
			default:
				s.Policy, s.Limit, s.HighWater, s.Target = rule.Name, rule.Limit, rule.HighWater, rule.Target
				s.Blocked = strings.Join(nonEmpty(repoHold(rl, idx, pc, holds), unready), "; ")
				if a := by[s.Repository]; a != nil {
					s.Delete, s.Mark, s.FreedBytes = a.del, a.mark, a.bytes
					for c, n := range a.kept {
						s.Kept[c] = n
					}
					if n := s.Images - a.decided; n > 0 {
						s.Kept[ClassNotNeeded] = n
					}
				} else if s.Images > 0 {
					s.Kept[ClassNotNeeded] = s.Images
				}
			}
			s.After = s.Images - s.Delete
			// A repository's rows say percent (0..100) and project nothing
			// (its trim is the projection); the history of a limited one's
			// image count is kept for charts.
			h := layout.Measure(layout.Pool{Used: float64(s.Images), Limit: float64(s.Limit), Frees: float64(s.Delete), WarnAt: k.Policy.HeadroomWarning, Trend: trendKey(s)}, &p.State.Usage, p.GeneratedAt)
			s.UsedPct, s.UsedPctAfter, s.Warning = 100*h.UsedPct, 100*h.UsedPctAfter, h.Warning
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Repository < out[b].Repository })
	return out
}

// warningText warns of a repository near its image limit.
func warningText(r RepoSummary) string {
	return fmt.Sprintf("%s holds %d of %d images (%.1f%%); %d after this plan — pushes fail at the limit.",
		r.Repository, r.Images, r.Limit, r.UsedPct, r.After)
}

func repositoriesSection(rs []RepoSummary) layout.Section {
	s := layout.Section{Key: "repositories", Data: rs, Place: layout.Overview, Title: "ECR REPOSITORIES"}
	return layout.Table(s, len(rs), layout.Block{Indent: 2, Header: []string{"REPOSITORY", "IMAGES/LIMIT", "USED", "TRIM ABOVE→TO", "DELETE", "FREES", "MARK", "USED AFTER", "KEPT"}}, func(b *layout.Block) {
		for _, r := range rs {
			var kept []string
			for _, c := range keptOrder {
				if n := r.Kept[c]; n > 0 {
					kept = append(kept, fmt.Sprintf("%d %s", n, c))
				}
			}
			if r.Limit == 0 {
				b.Rows = append(b.Rows, []string{r.Repository, fmt.Sprint(r.Images), "", "", "", "", "", "", strings.Join(kept, ", ")})
				continue
			}
			b.Rows = append(b.Rows, []string{r.Repository, fmt.Sprintf("%d/%d", r.Images, r.Limit), fmt.Sprintf("%.1f%%", r.UsedPct),
				fmt.Sprintf("%d→%d", r.HighWater, r.Target), fmt.Sprint(r.Delete), layout.HumanBytes(r.FreedBytes), fmt.Sprint(r.Mark),
				fmt.Sprintf("%.1f%%", r.UsedPctAfter), strings.Join(kept, ", ")})
		}
		for _, r := range rs {
			if r.Warning {
				b.Lines = append(b.Lines, "  ! "+warningText(r))
			}
			if r.Blocked != "" && r.Kept[ClassProtected] == 0 {
				b.Lines = append(b.Lines, fmt.Sprintf("  ! %s: no image is deleted this run: %s", r.Repository, r.Blocked))
			}
		}
	})
}

// maxChanges is how many deletions (and marks) of a repository the text
// report lists one per line; the rest are counted.
const maxChanges = 25

// decisionLists lists image decisions per repository: what goes and why,
// and for kept images the strongest reason (the report lists a few of each
// class).
type decisionLists struct {
	byRepo map[string]*layout.Block
	repos  []string
	shown  map[shownKey]int
	more   map[string]map[engine.Action]int
}

// shownKey counts a repository's listed decisions of an action.
type shownKey struct {
	repo   string
	action engine.Action
}

func newDecisionLists() *decisionLists {
	return &decisionLists{byRepo: map[string]*layout.Block{}, shown: map[shownKey]int{}, more: map[string]map[engine.Action]int{}}
}

// lists says whether a decision of repo is listed, counting it: every kept
// image is, and the first maxChanges of each other action.
func (l *decisionLists) lists(repo string, a engine.Action) bool {
	if l.byRepo[repo] == nil {
		l.byRepo[repo] = &layout.Block{Heading: "  " + repo, Indent: 4}
		l.repos = append(l.repos, repo)
		l.more[repo] = map[engine.Action]int{}
	}
	if a == engine.Keep {
		return true
	}
	key := shownKey{repo, a}
	if l.shown[key] >= maxChanges {
		l.more[repo][a]++
		return false
	}
	l.shown[key]++
	return true
}

// add lists d, which lists took.
func (l *decisionLists) add(d *engine.Decision, det *Detail) {
	l.byRepo[det.Repository].Add(d, ShortDigest(det.Digest), orDefault(strings.Join(det.Tags, ","), "<untagged>"), d.Frees.String(), d.Why())
}

// section is the lists as the report's ECR IMAGES section.
func (l *decisionLists) section() layout.Section {
	if len(l.repos) == 0 {
		return layout.Section{}
	}
	sort.Strings(l.repos)
	s := layout.Section{Title: "ECR IMAGES", Place: layout.Details}
	for _, r := range l.repos {
		b := l.byRepo[r]
		for _, a := range []engine.Action{engine.Delete, engine.Mark, engine.Report} {
			if n := l.more[r][a]; n > 0 {
				b.Lines = append(b.Lines, fmt.Sprintf("    %s: %d more", strings.ToUpper(string(a)), n))
			}
		}
		s.Blocks = append(s.Blocks, *b)
	}
	return s
}

func nonEmpty(ss ...string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// trendKey is the key of a repository's image count history: none for a
// repository no rule limits (counted only).
func trendKey(r RepoSummary) string {
	if r.Limit == 0 {
		return ""
	}
	return "ecr/" + r.Repository
}
