package ecrimage

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

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

// unresolvable says what a reference lacks that would let it name one
// repository's images.
func unresolvable(r inventory.ImageRef) string {
	switch {
	case r.Repo.Name == "" || r.Repo.Account == "":
		return "reference naming no ECR repository"
	case r.Repo.Region == "":
		return "reference naming no region (it may pull from any of the account's regions)"
	}
	return "reference without tag or digest"
}

func indexImages(snap *inventory.View) imageIndex {
	idx := imageIndex{repos: map[inventory.RepoKey]*repoRefs{}}
	seenPin := map[pin]bool{}
	add := func(u inventory.ImageUse) {
		r := u.Ref
		if r.Repo.Name == "" || r.Repo.Account == "" || r.Repo.Region == "" || (r.Tag == "" && r.Digest == "") {
			p := pin{repo: r.Repo, why: fmt.Sprintf("%s at %s", orDefault(u.Problem, unresolvable(r)), u.Where)}
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
	for _, s := range ImageSourcesOf(snap) {
		for _, u := range s.Images {
			add(u)
		}
	}
	return idx
}

// pushOrder orders images oldest first, then by digest.
func pushOrder(a, b *inventory.Image) int {
	if c := a.PushedAt.Compare(b.PushedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Digest, b.Digest)
}

// imagePlan is the working state of one repository's plan.
type imagePlan struct {
	imgs    []inventory.Image
	class   []string
	reason  []string
	parents map[string][]int // child digest -> indexes of the images listing it
	byDig   map[string]int   // nil when no image lists children
}

// classify finds each image's strongest keep reason ("" for none).
func classify(rl *inventory.RepoListing, rule *RepoRule, refs *repoRefs, ip *Policy, now time.Time) *imagePlan {
	// Materialized for this repository only, while it is planned.
	ipl := newImagePlan(rl.Images.Slice())
	newest := ipl.newest(rule.KeepNewest)
	for i := range ipl.imgs {
		ipl.keepReason(i, rule, refs, ip, newest[i], now)
	}
	ipl.keepChildren()
	return ipl
}

// newImagePlan is the plan of imgs, each index's children found.
func newImagePlan(imgs []inventory.Image) *imagePlan {
	n := len(imgs)
	ipl := &imagePlan{imgs: imgs, class: make([]string, n), reason: make([]string, n), parents: map[string][]int{}}
	// Only an index's children are looked up by digest: a repository of
	// single manifests (a backlog of builds) needs no index of a million.
	if slices.ContainsFunc(imgs, func(img inventory.Image) bool { return len(img.Children) > 0 }) {
		ipl.byDig = make(map[string]int, n)
		for i, img := range imgs {
			ipl.byDig[img.Digest] = i
		}
	}
	for i, img := range imgs {
		for _, ch := range img.Children {
			if _, ok := ipl.byDig[ch]; ok {
				ipl.parents[ch] = append(ipl.parents[ch], i)
			}
		}
	}
	return ipl
}

// newest ranks the newest keep images among those that are not children
// of an index (1 is the newest).
func (ipl *imagePlan) newest(keep int) map[int]int {
	var tops []int
	for i, img := range ipl.imgs {
		if len(ipl.parents[img.Digest]) == 0 {
			tops = append(tops, i)
		}
	}
	slices.SortStableFunc(tops, func(a, b int) int { return pushOrder(&ipl.imgs[b], &ipl.imgs[a]) }) // newest first
	newest := map[int]int{}
	for r, i := range tops {
		if r >= keep {
			break
		}
		newest[i] = r + 1
	}
	return newest
}

// set gives image i its keep reason, unless a stronger one came first.
func (ipl *imagePlan) set(i int, class, reason string) {
	if ipl.class[i] == "" {
		ipl.class[i], ipl.reason[i] = class, reason
	}
}

// keepReason finds image i's keep reasons, strongest first: in use, a
// protected tag, pulled lately, among the newest (rank, 0: not), young.
func (ipl *imagePlan) keepReason(i int, rule *RepoRule, refs *repoRefs, ip *Policy, rank int, now time.Time) {
	img := &ipl.imgs[i]
	if refs != nil {
		if u, ok := refs.digests[img.Digest]; ok {
			ipl.set(i, ClassInUse, "in use by "+u.String())
		}
		for _, t := range img.Tags {
			if u, ok := refs.tags[t]; ok {
				ipl.set(i, ClassInUse, fmt.Sprintf("in use by %s (tag %s)", u, t))
			}
		}
	}
	for _, t := range img.Tags {
		for _, re := range rule.KeepTags {
			if re.MatchString(t) {
				ipl.set(i, ClassProtectedTag, fmt.Sprintf("protected tag %s (keepTags %s)", t, globOf(re)))
			}
		}
	}
	if rule.KeepPulledWithin > 0 && !img.LastPull.IsZero() && now.Sub(img.LastPull) < rule.KeepPulledWithin {
		ipl.set(i, ClassPulled, fmt.Sprintf("pulled %s, within keepPulledWithin %s", fmtTime(img.LastPull), layout.HumanDuration(rule.KeepPulledWithin)))
	}
	if rank > 0 {
		ipl.set(i, ClassNewest, fmt.Sprintf("newest %d pushed (#%d, keepNewest %d)", rule.KeepNewest, rank, rule.KeepNewest))
	}
	if engine.Young(img.PushedAt, now, ip.MinAge.Std()) { // out of the selection, so the trim takes an older one
		ipl.set(i, ClassYoung, fmt.Sprintf("pushed %s, younger than minAge %s", fmtTime(img.PushedAt), layout.HumanDuration(ip.MinAge.Std())))
	}
}

// keepChildren keeps the children of a kept index, transitively (an index
// may list an index).
func (ipl *imagePlan) keepChildren() {
	for changed := true; changed; {
		changed = false
		for i, img := range ipl.imgs {
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
}

func globOf(re *regexp.Regexp) string {
	s := strings.TrimSuffix(strings.TrimPrefix(re.String(), "^"), "$")
	s = strings.ReplaceAll(s, "[^/]*", "*")
	s = strings.ReplaceAll(s, ".*", "**")
	s = strings.ReplaceAll(s, "[^/]", "?")
	return strings.ReplaceAll(s, `\`, "")
}
