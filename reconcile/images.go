package reconcile

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// ImagePolicy is the operator's policy for ECR images.
type ImagePolicy struct {
	// Repos are tried in order; the first that matches a repository applies.
	// A repository no rule matches is only counted.
	Repos             []RepoRule
	MinAge            time.Duration
	Grace             time.Duration
	MaxDeletes        int
	MaxDeletePercent  float64 // fraction of the images listed in policed repositories
	BreakerCandidates int
	HeadroomWarning   float64 // fraction of a repository's limit
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

func (p *ImagePolicy) rule(repo string) *RepoRule {
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

// ImageID names an image in decisions, state and the audit log.
func ImageID(repo inventory.RepoKey, digest string) string {
	return "ecr:" + repo.Account + "/" + repo.Region + "/" + repo.Name + "@" + digest
}

// ParseImageID is the inverse of ImageID.
func ParseImageID(id string) (inventory.RepoKey, string, error) {
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

func repoPrefix(k inventory.RepoKey) string { return ImageID(k, "") }

// use is who references an image: the first user seen and how many there are.
type use struct {
	where string
	users int
}

func (u use) String() string {
	if u.users > 1 {
		return fmt.Sprintf("%s (+%d more)", u.where, u.users-1)
	}
	return u.where
}

type repoRefs struct {
	tags    map[string]use
	digests map[string]use
}

// pin is a reference that could not be resolved to an image: it keeps every
// repository it could name. An empty account, region or name matches any.
type pin struct {
	repo inventory.RepoKey
	why  string
}

func (p pin) matches(k inventory.RepoKey) bool {
	return (p.repo.Account == "" || p.repo.Account == k.Account) && (p.repo.Region == "" || p.repo.Region == k.Region) &&
		(p.repo.Name == "" || p.repo.Name == k.Name)
}

// imageIndex is every reference of every source, by repository.
type imageIndex struct {
	repos map[inventory.RepoKey]*repoRefs
	pins  []pin
}

// pinned says why an unresolvable reference keeps repo whole, or "".
func (idx imageIndex) pinned(repo inventory.RepoKey) string {
	for _, p := range idx.pins {
		if p.matches(repo) {
			return p.why
		}
	}
	return ""
}

func indexImages(snap inventory.Snapshot) imageIndex {
	idx := imageIndex{repos: map[inventory.RepoKey]*repoRefs{}}
	seenPin := map[pin]bool{}
	add := func(u inventory.ImageUse) {
		r := u.Ref
		if r.Repo.Name == "" || r.Repo.Account == "" || r.Repo.Region == "" || (r.Tag == "" && r.Digest == "") {
			p := pin{repo: r.Repo, why: fmt.Sprintf("%s at %s", orDefault(u.Problem, "reference without tag or digest"), u.Where)}
			if !seenPin[p] {
				seenPin[p] = true
				idx.pins = append(idx.pins, p)
			}
			return
		}
		rr := idx.repos[r.Repo]
		if rr == nil {
			rr = &repoRefs{tags: map[string]use{}, digests: map[string]use{}}
			idx.repos[r.Repo] = rr
		}
		merge := func(m map[string]use, k string) {
			cur, ok := m[k]
			if !ok {
				cur.where = u.Where
			}
			cur.users += max(u.Users, 1)
			m[k] = cur
		}
		switch {
		case r.Digest != "":
			merge(rr.digests, r.Digest)
			if r.Tag != "" {
				merge(rr.tags, r.Tag)
			}
		default:
			merge(rr.tags, r.Tag)
		}
	}
	for _, c := range snap.Clusters {
		for _, u := range c.Images {
			add(u)
		}
	}
	for _, s := range snap.ImageSources {
		for _, u := range s.Images {
			add(u)
		}
	}
	return idx
}

// imageBlockers names the sources whose silence cannot be trusted for an account.
func imageBlockers(snap inventory.Snapshot, account string) []string {
	var out []string
	for _, c := range snap.Clusters {
		if !c.CouldPull(account) {
			continue
		}
		switch {
		case !c.Complete:
			out = append(out, "cluster "+c.Name+" could not be read completely")
		case !c.ImagesListed:
			out = append(out, "cluster "+c.Name+" was not asked for its images")
		}
	}
	for _, s := range snap.ImageSources {
		if !s.Complete {
			out = append(out, s.Name+" could not be read completely")
		}
	}
	return out
}

// imagePlan is the working state of one repository's plan.
type imagePlan struct {
	imgs    []inventory.Image
	class   []string
	reason  []string
	parents map[string][]int // child digest -> indexes of the images listing it
	byDig   map[string]int
}

// planImages adds a decision for every notable image and a summary per
// repository, then caps the deletions due, taken in the order they would go
// (oldest first, an index before its children).
func planImages(p *Plan, snap inventory.Snapshot, ip *ImagePolicy, st *State, now time.Time) {
	if ip == nil {
		return
	}
	idx := indexImages(snap)
	for _, s := range snap.ImageSources {
		p.Sources = append(p.Sources, Source{Kind: "manifests", Name: s.Name, Complete: s.Complete, Problems: s.Problems, Items: len(s.Images)})
		if !s.Complete {
			p.Incomplete = true
			p.Blocked = append(p.Blocked, fmt.Sprintf("%s is incomplete (%s): no image is deleted this run", s.Name, strings.Join(s.Problems, "; ")))
		}
	}
	settled := map[string]bool{} // repository prefixes whose clocks this run decides
	listed := map[inventory.RepoKey]bool{}
	candidates := map[string]bool{}
	var due []int
	inScope := 0
	for _, reg := range snap.Registries {
		var problems []string
		if !reg.Complete {
			problems = append(problems, reg.Problem)
			p.Incomplete = true
		}
		for _, rl := range reg.Repos {
			if !rl.Complete {
				problems = append(problems, rl.Repo.Name+": "+rl.Problem)
				p.Incomplete = true
			}
		}
		p.Sources = append(p.Sources, Source{Kind: "ecr-registry", Name: reg.Account + "/" + reg.Region,
			Complete: len(problems) == 0, Problems: problems, Items: len(reg.Repos)})
		blockers := imageBlockers(snap, reg.Account)
		if !reg.Complete {
			blockers = append(blockers, "the registry's repositories could not all be listed")
		}
		for _, rl := range reg.Repos {
			listed[rl.Repo] = true
			rule := ip.rule(rl.Repo.Name)
			if rule != nil && !rule.Protect && !rl.Protected {
				inScope += len(rl.Images)
			}
			d, ok := planRepo(p, rl, rule, idx, blockers, ip, st, now, candidates)
			due = append(due, d...)
			if ok {
				settled[repoPrefix(rl.Repo)] = true
			}
		}
		if reg.Complete {
			settled["ecr:"+reg.Account+"/"+reg.Region+"/"] = true // a repository not listed is gone
		}
	}
	// Forget the clocks of images that are no longer candidates in repositories
	// this run saw completely, and of repositories that are gone.
	for id := range st.Resources {
		if !strings.HasPrefix(id, "ecr:") || candidates[id] {
			continue
		}
		repo, _, err := ParseImageID(id)
		if err != nil {
			continue
		}
		if settled[repoPrefix(repo)] || (settled["ecr:"+repo.Account+"/"+repo.Region+"/"] && !listed[repo]) {
			delete(st.Resources, id)
		}
	}
	capImages(p, due, inScope, ip)
	summarize(p, ip)
}

// planRepo plans one repository. ok says whether its clocks were decided
// (complete evidence), so stale ones may be forgotten.
func planRepo(p *Plan, rl inventory.RepoListing, rule *RepoRule, idx imageIndex, blockers []string, ip *ImagePolicy,
	st *State, now time.Time, candidates map[string]bool) (due []int, ok bool) {
	sum := RepoSummary{Repository: rl.Repo.String(), Account: rl.Repo.Account, Region: rl.Repo.Region, Name: rl.Repo.Name,
		Images: len(rl.Images), Complete: rl.Complete, Kept: map[string]int{}}
	defer func() { p.Repositories = append(p.Repositories, sum) }()
	if rule == nil {
		sum.Kept[ClassNoPolicy] = len(rl.Images)
		return nil, true
	}
	sum.Policy, sum.Limit, sum.HighWater, sum.Target = rule.Name, rule.Limit, rule.HighWater, rule.Target
	if rule.Protect || rl.Protected {
		sum.Kept[ClassProtected] = len(rl.Images)
		why := "policy " + rule.Name + " protects it"
		if rl.Protected {
			why = "its protect tag opts it out"
		}
		sum.Blocked = "protected: " + why
		return nil, true
	}

	ipl := classify(rl, rule, idx.repos[rl.Repo], ip, now)
	var (
		n        = len(ipl.imgs)
		selected = make([]bool, n)
		order    []int // selected, in deletion order
	)
	// Candidates are images with no keep reason and no parent index in the
	// repository: a child goes only with its last index.
	var tops []int
	for i := range ipl.imgs {
		if ipl.class[i] == "" && len(ipl.parents[ipl.imgs[i].Digest]) == 0 {
			tops = append(tops, i)
		}
	}
	sort.SliceStable(tops, func(a, b int) bool {
		ia, ib := ipl.imgs[tops[a]], ipl.imgs[tops[b]]
		if !ia.PushedAt.Equal(ib.PushedAt) {
			return ia.PushedAt.Before(ib.PushedAt)
		}
		return ia.Digest < ib.Digest
	})
	removed := 0
	take := func(i int, reason, class string) {
		selected[i] = true
		ipl.class[i], ipl.reason[i] = class, reason
		order = append(order, i)
		removed++
		for _, ch := range ipl.imgs[i].Children {
			j, ok := ipl.byDig[ch]
			if !ok || selected[j] || ipl.class[j] != "" {
				continue
			}
			all := true
			for _, par := range ipl.parents[ch] {
				all = all && selected[par]
			}
			if all {
				selected[j] = true
				ipl.class[j] = class
				ipl.reason[j] = fmt.Sprintf("child of index %s, which goes", ShortDigest(ipl.imgs[i].Digest))
				order = append(order, j)
				removed++
			}
		}
	}
	need := 0
	if n > rule.HighWater {
		need = n - rule.Target
	}
	for _, i := range tops {
		if removed >= need {
			break
		}
		take(i, fmt.Sprintf("oldest unneeded: %d images > high-water %d of limit %d, trimming to %d",
			n, rule.HighWater, rule.Limit, rule.Target), ClassTrim)
	}
	if rule.UntaggedOlderThan > 0 {
		for _, i := range tops {
			img := ipl.imgs[i]
			if !selected[i] && len(img.Tags) == 0 && now.Sub(img.PushedAt) >= rule.UntaggedOlderThan {
				take(i, fmt.Sprintf("untagged, referenced by nothing, pushed %s (older than %s)", fmtTime(img.PushedAt), rule.UntaggedOlderThan), ClassUntagged)
			}
		}
	}

	// Blocked: the evidence is incomplete, so nothing is deleted and no clock starts.
	var why []string
	if !rl.Complete {
		why = append(why, "the repository could not be listed completely ("+rl.Problem+")")
	}
	if w := idx.pinned(rl.Repo); w != "" {
		why = append(why, "a reference that could not be resolved may name it: "+w)
	}
	why = append(why, blockers...)
	blocked := strings.Join(why, "; ")
	sum.Blocked = blocked

	deleting := map[string]bool{}
	for _, i := range order {
		img := ipl.imgs[i]
		id := ImageID(rl.Repo, img.Digest)
		dec := imageDecision(rl.Repo, img)
		dec.Class = ipl.class[i]
		if len(ipl.parents[img.Digest]) > 0 {
			for _, par := range ipl.parents[img.Digest] {
				dec.Parents = append(dec.Parents, ipl.imgs[par].Digest)
			}
		}
		dec.Action = Mark
		switch {
		case blocked != "":
			dec.Held = true
			dec.Reason = ipl.reason[i] + " — held: " + blocked
			if e, ok := st.Resources[id]; ok {
				t := e.FirstSeen
				dec.OrphanSince = &t
			}
		default:
			candidates[id] = true
			since := st.observeOrphan(id, now)
			after := since.Add(ip.Grace)
			dec.OrphanSince, dec.DeletableAfter = &since, &after
			if now.Before(after) {
				dec.Reason = fmt.Sprintf("%s — candidate since %s, deletable after %s (grace %s)", ipl.reason[i], fmtTime(since), fmtTime(after), ip.Grace)
				break
			}
			// A child goes only in the run its last index goes.
			waiting := ""
			for _, par := range dec.Parents {
				if !deleting[par] {
					waiting = par
				}
			}
			if waiting != "" {
				dec.Reason = fmt.Sprintf("%s — waits for its index %s", ipl.reason[i], ShortDigest(waiting))
				break
			}
			dec.Action = Delete
			dec.Reason = ipl.reason[i] + fmt.Sprintf("; candidate since %s", fmtTime(since))
			deleting[img.Digest] = true
		}
		p.Decisions = append(p.Decisions, dec)
		if dec.Action == Delete {
			due = append(due, len(p.Decisions)-1)
		}
	}
	// Kept images: a decision for each with a reason of its own, a count for the rest.
	for i, img := range ipl.imgs {
		if selected[i] {
			continue
		}
		c := ipl.class[i]
		if c == "" {
			c = ClassNotNeeded
		}
		sum.Kept[c]++
		if c == ClassNotNeeded {
			continue
		}
		st.forget(ImageID(rl.Repo, img.Digest))
		dec := imageDecision(rl.Repo, img)
		dec.Action, dec.Class, dec.Reason = Keep, c, ipl.reason[i]
		p.Decisions = append(p.Decisions, dec)
	}
	return due, blocked == ""
}

// classify finds each image's strongest keep reason ("" for none).
func classify(rl inventory.RepoListing, rule *RepoRule, refs *repoRefs, ip *ImagePolicy, now time.Time) *imagePlan {
	n := len(rl.Images)
	ipl := &imagePlan{imgs: rl.Images, class: make([]string, n), reason: make([]string, n),
		parents: map[string][]int{}, byDig: make(map[string]int, n)}
	for i, img := range rl.Images {
		ipl.byDig[img.Digest] = i
	}
	for i, img := range rl.Images {
		for _, ch := range img.Children {
			if _, ok := ipl.byDig[ch]; ok {
				ipl.parents[ch] = append(ipl.parents[ch], i)
			}
		}
	}
	set := func(i int, class, reason string) {
		if ipl.class[i] == "" {
			ipl.class[i], ipl.reason[i] = class, reason
		}
	}
	// Newest N among the images that are not children of an index.
	var tops []int
	for i, img := range rl.Images {
		if len(ipl.parents[img.Digest]) == 0 {
			tops = append(tops, i)
		}
	}
	sort.SliceStable(tops, func(a, b int) bool {
		ia, ib := rl.Images[tops[a]], rl.Images[tops[b]]
		if !ia.PushedAt.Equal(ib.PushedAt) {
			return ia.PushedAt.After(ib.PushedAt)
		}
		return ia.Digest > ib.Digest
	})
	newest := map[int]int{}
	for r, i := range tops {
		if r >= rule.KeepNewest {
			break
		}
		newest[i] = r + 1
	}
	for i, img := range rl.Images {
		if refs != nil {
			if u, ok := refs.digests[img.Digest]; ok {
				set(i, ClassInUse, "in use by "+u.String())
			}
			for _, t := range img.Tags {
				if u, ok := refs.tags[t]; ok {
					set(i, ClassInUse, fmt.Sprintf("in use by %s (tag %s)", u, t))
				}
			}
		}
		for _, t := range img.Tags {
			for _, re := range rule.KeepTags {
				if re.MatchString(t) {
					set(i, ClassProtectedTag, fmt.Sprintf("protected tag %s (keepTags %s)", t, globOf(re)))
				}
			}
		}
		if rule.KeepPulledWithin > 0 && !img.LastPull.IsZero() && now.Sub(img.LastPull) < rule.KeepPulledWithin {
			set(i, ClassPulled, fmt.Sprintf("pulled %s, within keepPulledWithin %s", fmtTime(img.LastPull), rule.KeepPulledWithin))
		}
		if r, ok := newest[i]; ok {
			set(i, ClassNewest, fmt.Sprintf("newest %d pushed (#%d, keepNewest %d)", rule.KeepNewest, r, rule.KeepNewest))
		}
		if now.Sub(img.PushedAt) < ip.MinAge {
			set(i, ClassYoung, fmt.Sprintf("pushed %s, younger than minAge %s", fmtTime(img.PushedAt), ip.MinAge))
		}
	}
	// Children of a kept index are kept, transitively (an index may list an index).
	for changed := true; changed; {
		changed = false
		for i, img := range rl.Images {
			if ipl.class[i] == "" {
				continue
			}
			for _, ch := range img.Children {
				j, ok := ipl.byDig[ch]
				if !ok || ipl.class[j] != "" {
					continue
				}
				ipl.class[j] = ClassIndexChild
				ipl.reason[j] = fmt.Sprintf("child of index %s (%s)", ShortDigest(img.Digest), ipl.reason[i])
				changed = true
			}
		}
	}
	return ipl
}

func imageDecision(repo inventory.RepoKey, img inventory.Image) Decision {
	d := Decision{Kind: KindImage, ID: ImageID(repo, img.Digest), Account: repo.Account, Region: repo.Region,
		Name: repo.Name, Repository: repo.String(), Digest: img.Digest, Tags: img.Tags, Bytes: img.SizeBytes, Type: mediaKind(img)}
	if !img.PushedAt.IsZero() {
		t := img.PushedAt
		d.PushedAt = &t
	}
	if !img.LastPull.IsZero() {
		t := img.LastPull
		d.PulledAt = &t
	}
	return d
}

func mediaKind(img inventory.Image) string {
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

func globOf(re *regexp.Regexp) string {
	s := strings.TrimSuffix(strings.TrimPrefix(re.String(), "^"), "$")
	s = strings.ReplaceAll(s, "[^/]*", "*")
	s = strings.ReplaceAll(s, ".*", "**")
	s = strings.ReplaceAll(s, "[^/]", "?")
	return strings.ReplaceAll(s, `\`, "")
}

// capImages applies the breaker and the per-run caps. due is in deletion
// order; a child whose index is held is held too.
func capImages(p *Plan, due []int, inScope int, ip *ImagePolicy) {
	if len(due) == 0 {
		return
	}
	if tripBreaker(p, due, ip.BreakerCandidates, fmt.Sprintf("breaker: %d images are due for deletion, more than ecr.breakerCandidates %d; none is deleted this run — check that every cluster is in the config before raising it",
		len(due), ip.BreakerCandidates)) {
		return
	}
	maxCount := perRunMax(ip.MaxDeletes, ip.MaxDeletePercent, inScope)
	held := map[string]bool{} // repository@digest
	n := 0
	for _, i := range due {
		d := &p.Decisions[i]
		parentHeld := false
		for _, par := range d.Parents {
			parentHeld = parentHeld || held[d.Repository+"@"+par]
		}
		switch {
		case parentHeld:
			hold(d, "its index is held by the per-run cap; next run")
			held[d.Repository+"@"+d.Digest] = true
		case n >= maxCount:
			hold(d, fmt.Sprintf("per-run cap of %d images reached (ecr.maxDeletesPerRun %d, maxDeletePercent %.0f%% of %d); next run",
				maxCount, ip.MaxDeletes, ip.MaxDeletePercent*100, inScope))
			held[d.Repository+"@"+d.Digest] = true
		default:
			n++
		}
	}
}

// summarize counts each repository's deletions and headroom after the caps.
func summarize(p *Plan, ip *ImagePolicy) {
	type agg struct {
		del, mark int
		bytes     int64
	}
	by := map[string]*agg{}
	for _, d := range p.Decisions {
		if d.Kind != KindImage || (d.Action != Delete && d.Action != Mark) {
			continue
		}
		a := by[d.Repository]
		if a == nil {
			a = &agg{}
			by[d.Repository] = a
		}
		if d.Action == Delete {
			a.del++
			a.bytes += d.Bytes
		} else {
			a.mark++
		}
	}
	for i := range p.Repositories {
		s := &p.Repositories[i]
		if a := by[s.Repository]; a != nil {
			s.Delete, s.Mark, s.FreedBytes = a.del, a.mark, a.bytes
		}
		s.After = s.Images - s.Delete
		if s.Limit > 0 {
			s.UsedPct = 100 * float64(s.Images) / float64(s.Limit)
			s.UsedPctAfter = 100 * float64(s.After) / float64(s.Limit)
			s.Warning = float64(s.Images) >= ip.HeadroomWarning*float64(s.Limit)
		}
	}
	sort.SliceStable(p.Repositories, func(a, b int) bool { return p.Repositories[a].Repository < p.Repositories[b].Repository })
}

// imageGone says whether a complete listing shows an image is gone (known
// false: the repository was not listed completely, so nobody can tell).
func imageGone(snap inventory.Snapshot, id string) (gone, known bool) {
	repo, digest, err := ParseImageID(id)
	if err != nil {
		return false, false
	}
	for _, reg := range snap.Registries {
		if reg.Account != repo.Account || reg.Region != repo.Region {
			continue
		}
		for _, rl := range reg.Repos {
			if rl.Repo != repo {
				continue
			}
			if !rl.Complete {
				return false, false
			}
			for _, img := range rl.Images {
				if img.Digest == digest {
					return false, true
				}
			}
			return true, true
		}
		return reg.Complete, reg.Complete // the repository itself is gone
	}
	return false, false
}
