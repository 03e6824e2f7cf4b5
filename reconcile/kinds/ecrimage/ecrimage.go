// Package ecrimage is the ecr-image kind: images in ECR repositories trimmed
// under each repository's image limit, never one that any cluster or
// manifest of the fleet still references (by tag or digest), never a child
// an index still lists.
package ecrimage

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Bytes is what an image's deletion frees: registry storage.
var Bytes = &amount.Unit{Name: "bytes", Key: amount.KeyBytes, Say: layout.HumanBytes, Bytes: 1}

// Name is the kind as reports and the audit log spell it (schema v1).
const Name = "ecr-image"

// MaxBatch is BatchDeleteImage's limit on imageIds.
const MaxBatch = 100

// Policy is the operator's policy for ECR images (the ecr section).
type Policy struct {
	// PerGBMonth is ECR's storage price (config.Prices.ECRPerGBMonth).
	PerGBMonth float64
	// Repos are tried in order; the first that matches a repository applies.
	// A repository no rule matches is only counted.
	Repos []RepoRule
	// Safety is the ecr section's: protectTag (the repository resource tag
	// that, with any value, keeps the repository untrimmed; read by the
	// provider, named by reports), minAge, grace, the caps (maxDeletePercent
	// of the images listed in policed repositories) and the breaker.
	config.Safety
	HeadroomWarning float64 // fraction of a repository's limit
	// OutOfScopePullers are the principals (an account, an organization
	// id, "*") declared out of reclaim's view, with their reasons.
	OutOfScopePullers map[string]string
	// Parallel is how many repositories' batches are deleted at once (the
	// provider's rate limit still paces every call).
	Parallel int
}

// RepoRule is how far matching repositories are trimmed and what they keep.
type RepoRule struct {
	Name              string // the match or regex as written, for the report
	Match             *regexp.Regexp
	Limit             int
	HighWater         int // trim only above this many images
	Target            int // and down to this many
	KeepNewest        int
	KeepTags          []*regexp.Regexp
	KeepPulledWithin  time.Duration
	UntaggedOlderThan time.Duration
	Protect           bool
}

func (p *Policy) rule(repo string) *RepoRule {
	for i := range p.Repos {
		if p.Repos[i].Match.MatchString(repo) {
			return &p.Repos[i]
		}
	}
	return nil
}

// Reason classes of image decisions, strongest first.
const (
	ClassInUse        = "in-use"
	ClassIndexChild   = "index-child"
	ClassProtectedTag = "protected-tag"
	ClassPulled       = "recently-pulled"
	ClassNewest       = "newest"
	ClassYoung        = "too-young"
	ClassNotNeeded    = "not-needed"
	ClassProtected    = "protected-repository"
	ClassNoPolicy     = "no-policy"
	ClassTrim         = "trim"
	ClassUntagged     = "untagged"
)

// Kind plans and deletes images.
type Kind struct {
	Policy *Policy
	API    API // nil: plan only
}

// Detail is what an image decision says beyond the envelope (schema v1 fields).
type Detail struct {
	Account    string    `json:"account,omitempty"`
	Region     string    `json:"region,omitempty"`
	Repository string    `json:"repository,omitempty"`
	Digest     string    `json:"digest,omitempty"`
	Tags       []string  `json:"tags,omitempty"`
	Type       string    `json:"type,omitempty"` // manifest or index
	PushedAt   time.Time `json:"pushedAt,omitzero"`
	PulledAt   time.Time `json:"pulledAt,omitzero"`
	// Parents are the indexes an image is a child of; it is deleted after them.
	Parents []string `json:"parents,omitempty"`
	// labels are the repository's tags the listing kept (the owner tag),
	// shared by its images, for routing (Where).
	labels map[string]string
	// Repo is the repository the image was listed in: what its re-read
	// and delete name, never parsed back from the id.
	Repo inventory.RepoKey `json:"-"`
}

var _ engine.Located = (*Detail)(nil) // routed by notify.routes

// Where is the image's account/region and repository.
func (d *Detail) Where() engine.Where {
	return engine.Where{Scope: d.Account + "/" + d.Region, Repository: d.Repository, Labels: d.labels}
}

// DetailOf returns an image decision's detail.
func DetailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// ID names an image in decisions, state and the audit log.
func ID(repo inventory.RepoKey, digest string) string {
	return "ecr:" + repo.Account + "/" + repo.Region + "/" + repo.Name + "@" + digest
}

// ParseID is the inverse of ID.
func ParseID(id string) (inventory.RepoKey, string, error) {
	rest, ok := strings.CutPrefix(id, "ecr:")
	at := strings.LastIndexByte(rest, '@')
	if !ok || at < 0 {
		return inventory.RepoKey{}, "", fmt.Errorf("image id %q: want ecr:ACCOUNT/REGION/REPO@DIGEST", id)
	}
	parts := strings.SplitN(rest[:at], "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return inventory.RepoKey{}, "", fmt.Errorf("image id %q: want ecr:ACCOUNT/REGION/REPO@DIGEST", id)
	}
	return inventory.RepoKey{Account: parts[0], Region: parts[1], Name: parts[2]}, rest[at+1:], nil
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { return strings.HasPrefix(id, "ecr:") }

func (k *Kind) Limits() engine.Limits {
	// The selection keeps a young image out of the trim (a keep class of its
	// own, so the trim takes an older one instead); the engine's minimum age
	// still guards every candidate, as for every kind.
	l := kind.Limits(k.Policy.Safety, Bytes)
	l.BatchSize, l.Parallel = MaxBatch, k.Policy.Parallel
	l.Wording = engine.Wording{Section: "ecr", Noun: "images", Guarded: "image it could pull"}
	// A trim back to target is a repository's backlog, bounded by its
	// count: the caps pace it, the breaker judges the untagged rule.
	l.QuotaClasses = []string{ClassTrim}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optOut(k.Policy.ProtectTag) }

// optOut says how an image is kept: a protect tag on its repository, or a
// keepTags pattern in the config.
func optOut(tag string) string {
	if tag == "" {
		return "add the image's tag to the repository's keepTags in the ecr section"
	}
	return optout.Rule("tag", tag, "repository") + " (keeps all its images), or add the image's tag to keepTags"
}

// Propose gives every image with a reason of its own a proposal: a candidate
// for each image the trim or the untagged rule selects, a keep for each with a
// keep reason. Images kept only because the repository is under its
// high-water mark get none (they are counted in the repository's view), so a
// million-image registry costs a proposal only for what is notable.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := imageSources(snap)
	idx := indexImages(snap)
	pc := newPullerCheck(snap, k.Policy.OutOfScopePullers)
	repos, all := k.reposOf(snap, pc, &out)
	// Repositories are listed (Ensure) and proposed one at a time as the
	// engine decides them; a repository listed lazily is dropped once
	// planned (its count and digests' hashes kept), so that neither the
	// listing nor the proposals of a million images live at once.
	inScope := 0
	out.Stream = func(yield func(*engine.Proposal) bool) {
		for _, at := range all {
			rl := at.rl
			rl.Ensure()
			ok := true
			if at.rule != nil && !at.rule.Protect && !rl.Protected && !rl.Gone {
				inScope += rl.Len()
				sources := at.sources
				// The registry's own account and its policy's pullers guard
				// every repository already (evidence): only a repository
				// policy's pullers add guards.
				if len(rl.Pullers) > 0 {
					sources = inventory.UniqueKeys(append(slices.Clone(sources), pc.guards(snap.Fleet, rl.Repo.Account, rl.Pullers)...))
				}
				ok = k.proposeRepo(yield, rl, at.rule, idx.repos[rl.Repo], sources, repoHold(rl, idx, pc, at.holds), now)
			}
			rl.Drop()
			if !ok {
				return
			}
		}
	}
	// Once every repository is listed: the registries' completeness, with
	// each repository's problems, and the images the percent cap is of.
	out.Finish = func() engine.Finished {
		f := engine.Finished{InScope: inScope, Notices: pc.notices()}
		regs := RegistriesOf(snap)
		for ri := range regs {
			f.Sources = append(f.Sources, registrySource(&regs[ri]))
		}
		return f
	}
	out.Presence = presence(snap, repos)
	return out
}

// imageSources are the proposals' sources of image references: an
// incomplete one blocks every delete.
func imageSources(snap *inventory.View) engine.Proposals {
	out := engine.Proposals{}
	for _, s := range ImageSourcesOf(snap) {
		out.Sources = append(out.Sources, engine.Source{Kind: s.SourceKind(), Name: s.Name, Complete: s.Complete, Problems: s.Problems,
			Items: len(s.Images), Unit: "image references"})
		if !s.Complete {
			out.Blocked = append(out.Blocked, fmt.Sprintf("%s is incomplete (%s): no image is deleted this run", s.Name, strings.Join(s.Problems, "; ")))
		}
	}
	return out
}

// repoAt is a repository listed, its rule and the evidence its deletes rely
// on.
type repoAt struct {
	rl      *inventory.RepoListing
	rule    *RepoRule
	sources []string
	holds   []string
}

// reposOf are the registries' repositories, by key and in listing order;
// each registry is a source of out.
func (k *Kind) reposOf(snap *inventory.View, pc *pullerCheck, out *engine.Proposals) (map[inventory.RepoKey]repoAt, []repoAt) {
	repos := map[inventory.RepoKey]repoAt{}
	var all []repoAt
	regs := RegistriesOf(snap)
	for ri := range regs {
		reg := &regs[ri]
		out.Sources = append(out.Sources, registrySource(reg))
		sources, holds := evidence(snap, reg, pc)
		for i := range reg.Repos {
			rl := &reg.Repos[i]
			at := repoAt{rl: rl, rule: k.Policy.rule(rl.Repo.Name), sources: sources, holds: holds}
			repos[rl.Repo] = at
			all = append(all, at)
		}
	}
	return repos, all
}

// presence answers from the listings only: a repository listed completely
// shows an image or not; a registry listed completely shows a repository
// or not.
func presence(snap *inventory.View, repos map[inventory.RepoKey]repoAt) func(string) engine.Presence {
	return engine.ListedBy(func(id string) bool {
		repo, _, err := ParseID(id)
		if err != nil {
			return false
		}
		if at, ok := repos[repo]; ok {
			at.rl.Ensure()
			return at.rl.Gone || at.rl.Complete
		}
		for _, reg := range RegistriesOf(snap) {
			if reg.Account == repo.Account && reg.Region == repo.Region && reg.Complete {
				return true // the repository itself is gone
			}
		}
		return false
	}, func(id string) bool {
		repo, digest, _ := ParseID(id)
		at, ok := repos[repo]
		if ok {
			at.rl.Ensure()
		}
		return ok && !at.rl.Gone && at.rl.HasDigest(digest)
	})
}

// registrySource is a registry's source: complete when its repositories
// were all listed and every repository listed so far was listed completely.
func registrySource(reg *inventory.RegistryListing) engine.Source {
	var problems []string
	if !reg.Complete {
		problems = append(problems, reg.Problem)
	}
	for i := range reg.Repos {
		if rl := &reg.Repos[i]; !rl.Complete && rl.Listed() {
			problems = append(problems, rl.Repo.Name+": "+rl.Problem)
		}
	}
	return engine.Source{Kind: "ecr-registry", Name: reg.Account + "/" + reg.Region,
		Complete: len(problems) == 0, Problems: problems, Items: len(reg.Repos), Unit: "repositories"}
}

// evidence is what every trim of a registry relies on: the clusters that
// could pull from its account and the manifest sources, by source key (the
// engine holds a trim while any is incomplete), and the kind's own reasons
// to distrust the evidence.
func evidence(snap *inventory.View, reg *inventory.RegistryListing, pc *pullerCheck) (sources []string, holds []string) {
	// The clusters that could pull from the account, read with their images
	// (inventory.ReadImages); every EKS cluster of the account, read or not;
	// and any cluster a failed discovery of the account hides.
	u := engine.Users{Reads: []string{inventory.ReadImages}, Members: snap.Fleet.EKSOf(reg.Account)}
	for _, c := range snap.Clusters {
		if c.CouldPull(reg.Account) {
			u.Clusters = append(u.Clusters, c.Name)
		}
	}
	if f := snap.Fleet; f != nil {
		for _, l := range f.Listings {
			if l.Platform == inventory.EKS && strings.HasPrefix(l.Scope, reg.Account+"/") {
				u.Scopes = append(u.Scopes, inventory.EKS+" "+l.Scope)
			}
		}
	}
	sources = u.Keys(snap.Fleet)
	for _, s := range ImageSourcesOf(snap) {
		sources = append(sources, inventory.SourceKey(s.SourceKind(), s.Name))
	}
	if !reg.Complete {
		holds = append(holds, "the registry's repositories could not all be listed")
	}
	// Who else may pull from every repository: the registry policy's pullers.
	if reg.PullersProblem != "" {
		holds = append(holds, "who the registry policy lets pull is unknown ("+reg.PullersProblem+")")
	}
	if why := pc.unreadOwn(reg.Account); why != "" {
		holds = append(holds, why)
	}
	if why := pc.unread(reg.Account, reg.Pullers, "the registry policy"); why != "" {
		holds = append(holds, why)
	}
	for _, key := range pc.guards(snap.Fleet, reg.Account, reg.Pullers) {
		if !slices.Contains(sources, key) {
			sources = append(sources, key)
		}
	}
	return sources, holds
}

// repoHold says why a repository's evidence is incomplete, beyond the
// sources the engine checks: a partial listing, or a reference that could
// not be resolved and may name it.
func repoHold(rl *inventory.RepoListing, idx imageIndex, pc *pullerCheck, holds []string) string {
	var why []string
	if !rl.Complete {
		why = append(why, "the repository could not be listed completely ("+rl.Problem+")")
	}
	if w := pc.unread(rl.Repo.Account, rl.Pullers, "its repository policy"); w != "" {
		why = append(why, w)
	}
	if w := idx.pinned(rl.Repo); w != "" {
		why = append(why, "a reference that could not be resolved may name it: "+w)
	}
	return strings.Join(append(why, holds...), "; ")
}

// selection is what of a repository goes, in deletion order.
type selection struct {
	ipl      *imagePlan
	selected []bool
	order    []int
}

// selectImages selects, of the images with no keep reason and no parent
// index in the repository (a child goes only with its last index), the
// oldest the trim needs to reach the rule's target, then the untagged ones
// old enough; trim is the reason the trim shares.
func selectImages(ipl *imagePlan, rule *RepoRule, now time.Time) (sel *selection, trim string) {
	n := len(ipl.imgs)
	sel = &selection{ipl: ipl, selected: make([]bool, n)}
	var tops []int
	for i := range ipl.imgs {
		if ipl.class[i] == "" && len(ipl.parents[ipl.imgs[i].Digest]) == 0 {
			tops = append(tops, i)
		}
	}
	slices.SortStableFunc(tops, func(a, b int) int { return pushOrder(&ipl.imgs[a], &ipl.imgs[b]) }) // oldest first
	need := 0
	if n > rule.HighWater {
		need = n - rule.Target
	}
	trim = fmt.Sprintf("oldest unneeded: %d images > high-water %d of limit %d, trimming to %d", n, rule.HighWater, rule.Limit, rule.Target)
	for _, i := range tops {
		if len(sel.order) >= need {
			break
		}
		sel.take(i, trim, ClassTrim) // one reason shared by the repository's trim
	}
	if rule.UntaggedOlderThan > 0 {
		for _, i := range tops {
			img := &ipl.imgs[i]
			if !sel.selected[i] && len(img.Tags) == 0 && now.Sub(img.PushedAt) >= rule.UntaggedOlderThan {
				sel.take(i, untaggedReason(img.PushedAt, rule.UntaggedOlderThan), ClassUntagged)
			}
		}
	}
	return sel, trim
}

// take selects image i, and each child of it whose every index goes.
func (sel *selection) take(i int, reason, class string) {
	ipl := sel.ipl
	sel.selected[i] = true
	ipl.class[i], ipl.reason[i] = class, reason
	sel.order = append(sel.order, i)
	for _, ch := range ipl.imgs[i].Children {
		j, ok := ipl.byDig[ch]
		if !ok || sel.selected[j] || ipl.class[j] != "" {
			continue
		}
		all := true
		for _, par := range ipl.parents[ch] {
			all = all && sel.selected[par]
		}
		if all {
			sel.selected[j] = true
			ipl.class[j] = class
			ipl.reason[j] = fmt.Sprintf("child of index %s, which goes", ShortDigest(ipl.imgs[i].Digest))
			sel.order = append(sel.order, j)
		}
	}
}

// proposeRepo selects what a repository's trim and untagged rules delete,
// oldest first and an index before its children, and appends a proposal for
// each selected image and each image with a keep reason of its own, one at
// a time (the engine copies what it keeps); false when yield stops.
func (k *Kind) proposeRepo(yield func(*engine.Proposal) bool, rl *inventory.RepoListing, rule *RepoRule, refs *repoRefs, sources []string, hold string, now time.Time) bool {
	ipl := classify(rl, rule, refs, k.Policy, now)
	n := len(ipl.imgs)
	sel, trim := selectImages(ipl, rule, now)
	selected, order := sel.selected, sel.order
	group := rl.Repo.String()
	// What neither waits for an index nor is one that others wait for is
	// kept by the plan as a row of this table (engine.Remaker).
	compact := &rows{repo: rl.Repo, labels: rl.Labels, group: group, trim: trim, untagged: rule.UntaggedOlderThan}
	isRow := func(i int) bool {
		img := &ipl.imgs[i]
		return len(ipl.parents[img.Digest]) == 0 && len(img.Children) == 0 && (ipl.class[i] == ClassTrim || ipl.class[i] == ClassUntagged)
	}
	if nrows := countWhere(order, isRow); nrows > 0 && 2*nrows >= n {
		// Most of the repository goes (a backlog): its rows are the
		// listing's table itself, not a copy of nearly all of it.
		compact.images, compact.shared, compact.untag = rl.Images, true, make([]bool, n)
		rl.KeepRows()
	}
	for _, i := range order {
		img := &ipl.imgs[i]
		p := proposal(rl.Repo, rl.Labels, group, img)
		p.Candidate, p.Sources, p.Hold, p.Created = true, sources, hold, img.PushedAt
		p.Class, p.Reason, p.Group = ipl.class[i], ipl.reason[i], group
		if isRow(i) {
			p.Remake, p.Item = compact, compact.add(i, img, p.Class == ClassUntagged)
		}
		det := p.Detail.(*Detail)
		for _, par := range ipl.parents[img.Digest] {
			det.Parents = append(det.Parents, ipl.imgs[par].Digest)
			p.After = append(p.After, ID(rl.Repo, ipl.imgs[par].Digest))
		}
		if len(det.Parents) > 0 {
			p.AfterWhy = "its index " + ShortDigest(det.Parents[len(det.Parents)-1])
		}
		if !yield(&p) {
			return false
		}
	}
	if !compact.shared {
		compact.images.Trim() // kept for the run: no room to grow
	}
	for i := range ipl.imgs {
		if selected[i] || ipl.class[i] == "" {
			continue // not needed: counted by the view, no proposal
		}
		p := proposal(rl.Repo, rl.Labels, group, &ipl.imgs[i])
		p.Class, p.Reason = ipl.class[i], ipl.reason[i]
		if !yield(&p) {
			return false
		}
	}
	return true
}

// rows are a repository's compact candidates, packed, made into their
// decisions again when a report or the applier needs one: the plan of a
// trim of 500,000 images keeps a row of this table and the engine's
// 40-byte verdict for each, not a Decision.
type rows struct {
	repo     inventory.RepoKey
	labels   map[string]string
	group    string
	trim     string        // the trim's reason, shared
	untagged time.Duration // the rule's untaggedOlderThan
	images   inventory.ImageTable
	untag    []bool // the row's class: untagged, else trim
	// shared: images is the repository's listing, and an item is the
	// image's index in it; else a copy of the candidates alone.
	shared bool
}

// add makes image i of the listing, img, a row; it returns the row's item.
func (r *rows) add(i int, img *inventory.Image, untagged bool) uint32 {
	if r.shared {
		r.untag[i] = untagged
		return uint32(i)
	}
	r.images.Add(*img)
	r.untag = append(r.untag, untagged)
	return uint32(len(r.untag) - 1)
}

func countWhere[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// Remake makes row item's proposal as proposeRepo made it. It only
// reads, so batches deleted in parallel may call it at once.
func (r *rows) Remake(item uint32) engine.Proposal {
	img := r.images.At(int(item))
	p := proposal(r.repo, r.labels, r.group, &img)
	p.Group = r.group
	if r.untag[item] {
		p.Class, p.Reason = ClassUntagged, untaggedReason(img.PushedAt, r.untagged)
	} else {
		p.Class, p.Reason = ClassTrim, r.trim
	}
	return p
}

// Frees is what deleting item frees (engine.Briefer): a report's totals
// read it for every candidate.
func (r *rows) Frees(item uint32) amount.Frees {
	return imageFrees(r.images.Size(int(item)), r.group)
}

// imageFrees is what deleting an image of size bytes frees in repository
// name: its bytes, of the repository's pool.
func imageFrees(size int64, name string) amount.Frees {
	return amount.Free(size, Bytes).In(name)
}

func untaggedReason(pushed time.Time, olderThan time.Duration) string {
	return fmt.Sprintf("untagged, referenced by nothing, pushed %s (older than %s)", fmtTime(pushed), olderThan)
}

func proposal(repo inventory.RepoKey, labels map[string]string, name string, img *inventory.Image) engine.Proposal {
	id := ID(repo, img.Digest)
	// The detail's digest is the id's tail: one string for both.
	det := &Detail{Account: repo.Account, Region: repo.Region, Repository: name, Digest: id[len(id)-len(img.Digest):], Tags: img.Tags, Type: mediaKind(img), labels: labels, Repo: repo}
	det.PushedAt, det.PulledAt = img.PushedAt, img.LastPull
	return engine.Proposal{ID: id, Name: repo.Name, Detail: det,
		Frees: imageFrees(img.SizeBytes, name)}
}

func mediaKind(img *inventory.Image) string {
	if img.IsIndex() {
		return "index"
	}
	return "manifest"
}

// ShortDigest abbreviates a digest for people: sha256:0123456789ab.
func ShortDigest(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// MonthlyCost implements engine.Pricer: an image's size at ECR's storage
// price (AWS's GB are GiB).
func (k *Kind) MonthlyCost(d *engine.Decision) float64 {
	return float64(d.Frees.Of(Bytes)) / amount.GiB * k.Policy.PerGBMonth
}
