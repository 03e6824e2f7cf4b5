package ecrimage_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

var (
	imgNow  = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	acct    = "123456789012"
	appRepo = inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/app"}
)

func dig(n int) string { return fmt.Sprintf("sha256:%04x%060x", n, n) }

// images makes n single-manifest images pushed one hour apart, oldest first,
// tagged build-N, never pulled.
func images(n int) []inventory.Image {
	out := make([]inventory.Image, n)
	for i := range out {
		out[i] = inventory.Image{Digest: dig(i + 1), Tags: []string{fmt.Sprintf("build-%d", i+1)},
			PushedAt: imgNow.Add(-time.Duration(n-i+48) * time.Hour), SizeBytes: 100 << 20,
			MediaType: inventory.MediaTypeOCIManifest}
	}
	return out
}

func imagePolicy(limit, high, target, newest int) *ecrimage.Policy {
	return &ecrimage.Policy{
		Repos: []ecrimage.RepoRule{{Name: "**", Match: regexp.MustCompile(`^.*$`), Limit: limit, HighWater: high, Target: target,
			KeepNewest: newest, KeepTags: []*regexp.Regexp{regexp.MustCompile(`^latest$`), regexp.MustCompile(`^v[^/]*$`)},
			KeepPulledWithin: 7 * 24 * time.Hour}},
		Safety: config.Safety{MinAge: config.Duration(24 * time.Hour), Grace: config.Duration(time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 1000, MaxDeletePercent: 1, BreakerCandidates: 1000}},
		HeadroomWarning: 0.9,
	}
}

func imageSnap(imgs []inventory.Image, uses ...inventory.ImageUse) inventory.View {
	return inventory.View{
		Clusters: []inventory.ClusterRefs{{Name: "prod-a", Complete: true, ImagesListed: true, Images: uses}},
		Clouds: map[string]any{ecrimage.Read: []inventory.RegistryListing{{Account: acct, Region: "us-east-1", Complete: true,
			Repos: []inventory.RepoListing{{Repo: appRepo, Images: inventory.NewImageTable(imgs...), Complete: true}}}}},
	}
}

func useDigest(d, where string) inventory.ImageUse {
	return inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo, Digest: d}, Where: where, Users: 1}
}

func useTag(t, where string) inventory.ImageUse {
	return inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo, Tag: t}, Where: where, Users: 1}
}

// build plans one run of the image kind (plan only: no API).
func build(snap inventory.View, ip *ecrimage.Policy, prev engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(&snap, []engine.Kind{&ecrimage.Kind{Policy: ip}}, prev, now)
}

// planTwice plans once to start the clocks and again after the grace period.
func planTwice(t *testing.T, snap inventory.View, ip *ecrimage.Policy) *engine.Plan {
	t.Helper()
	first := build(snap, ip, engine.NewState(), imgNow.Add(-2*time.Hour))
	return build(snap, ip, first.State, imgNow)
}

// imageActions returns the image decisions by digest.
func imageActions(p *engine.Plan) map[string]*engine.Decision {
	out := map[string]*engine.Decision{}
	for d := range p.All() {
		if d.Kind == ecrimage.Name {
			out[ecrimage.DetailOf(d).Digest] = d
		}
	}
	return out
}

// action is the action of digest's decision, "" when it has none.
func action(acts map[string]*engine.Decision, digest string) engine.Action {
	if d := acts[digest]; d != nil {
		return d.Action
	}
	return ""
}

func deleted(p *engine.Plan) []string {
	var out []string
	for d := range p.All() {
		if d.Kind == ecrimage.Name && d.Action == engine.Delete {
			out = append(out, ecrimage.DetailOf(d).Digest)
		}
	}
	return out
}

func shorts(ds []string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ecrimage.ShortDigest(d)
	}
	return out
}

func dump(p *engine.Plan) string {
	var b strings.Builder
	for d := range p.All() {
		fmt.Fprintf(&b, "  %s %s %s %s\n", d.Action, ecrimage.ShortDigest(ecrimage.DetailOf(d).Digest), d.Class, d.Why())
	}
	for _, r := range ecrimage.RepositoriesOf(p) {
		fmt.Fprintf(&b, "  repo %s %d/%d delete %d mark %d kept %v blocked %q\n", r.Name, r.Images, r.Limit, r.Delete, r.Mark, r.Kept, r.Blocked)
	}
	return b.String()
}

func TestImageTrimTable(t *testing.T) {
	type want struct {
		deleted []string          // exactly these are deleted
		class   map[string]string // digest -> class of its decision
		parents map[string]string // child digest -> its index, deleted first
	}
	idx := func(d string, children ...string) inventory.Image {
		return inventory.Image{Digest: d, MediaType: inventory.MediaTypeOCIIndex, Children: children, ChildrenKnown: true}
	}
	cases := []struct {
		name string
		snap func() inventory.View
		pol  *ecrimage.Policy
		want want
	}{
		{
			name: "below high-water nothing goes",
			snap: func() inventory.View { return imageSnap(images(8)) },
			pol:  imagePolicy(10, 9, 5, 1),
			want: want{deleted: nil},
		},
		{
			name: "above high-water the oldest unneeded go, down to target",
			snap: func() inventory.View { return imageSnap(images(10)) },
			pol:  imagePolicy(10, 9, 6, 2),
			want: want{deleted: []string{dig(1), dig(2), dig(3), dig(4)},
				class: map[string]string{dig(10): ecrimage.ClassNewest, dig(9): ecrimage.ClassNewest, dig(1): ecrimage.ClassTrim}},
		},
		{
			name: "in use by digest, by tag, in a ReplicaSet scaled to zero, protected tag, recently pulled, too young are kept",
			snap: func() inventory.View {
				imgs := images(10)
				imgs[1].Tags = []string{"v1.2.0"}
				imgs[2].LastPull = imgNow.Add(-24 * time.Hour)
				imgs[3].PushedAt = imgNow.Add(-time.Hour)
				return imageSnap(imgs,
					useDigest(dig(1), "prod-a/web/Pod/web-1 (app)"),
					useTag("build-5", "prod-b/web/ReplicaSet/web-7c9 (app)"))
			},
			pol: imagePolicy(10, 9, 6, 0),
			want: want{deleted: []string{dig(6), dig(7), dig(8), dig(9)},
				class: map[string]string{dig(1): ecrimage.ClassInUse, dig(5): ecrimage.ClassInUse, dig(2): ecrimage.ClassProtectedTag,
					dig(3): ecrimage.ClassPulled, dig(4): ecrimage.ClassYoung}},
		},
		{
			name: "children of an index in use are kept though untagged and old",
			snap: func() inventory.View {
				imgs := images(10)
				ix := idx(dig(100), dig(101), dig(102))
				ix.Tags, ix.PushedAt = []string{"multi"}, imgNow.Add(-500*time.Hour)
				c1 := inventory.Image{Digest: dig(101), PushedAt: ix.PushedAt, MediaType: inventory.MediaTypeOCIManifest}
				c2 := inventory.Image{Digest: dig(102), PushedAt: ix.PushedAt, MediaType: inventory.MediaTypeOCIManifest}
				return imageSnap(append([]inventory.Image{ix, c1, c2}, imgs...), useTag("multi", "prod-a/api/Deployment/api (api)"))
			},
			pol: func() *ecrimage.Policy {
				p := imagePolicy(13, 12, 10, 1)
				p.Repos[0].UntaggedOlderThan = time.Hour
				return p
			}(),
			want: want{deleted: []string{dig(1), dig(2), dig(3)},
				class: map[string]string{dig(100): ecrimage.ClassInUse, dig(101): ecrimage.ClassIndexChild, dig(102): ecrimage.ClassIndexChild}},
		},
		{
			name: "an unneeded index goes with its children, index first; a child another kept index lists stays",
			snap: func() inventory.View {
				old := imgNow.Add(-900 * time.Hour)
				ix := idx(dig(100), dig(101), dig(102))
				ix.Tags, ix.PushedAt = []string{"old-multi"}, old
				keep := idx(dig(200), dig(102))
				keep.Tags, keep.PushedAt = []string{"latest"}, old
				c1 := inventory.Image{Digest: dig(101), PushedAt: old}
				c2 := inventory.Image{Digest: dig(102), PushedAt: old}
				return imageSnap(append([]inventory.Image{ix, c1, c2, keep}, images(6)...))
			},
			pol: imagePolicy(10, 9, 7, 1),
			want: want{deleted: []string{dig(100), dig(101), dig(1)},
				class:   map[string]string{dig(102): ecrimage.ClassIndexChild, dig(200): ecrimage.ClassProtectedTag, dig(101): ecrimage.ClassTrim},
				parents: map[string]string{dig(101): dig(100)}},
		},
		{
			name: "untagged and unreferenced go sooner, below high-water",
			snap: func() inventory.View {
				imgs := images(5)
				imgs[0].Tags, imgs[1].Tags = nil, nil
				imgs[1].PushedAt = imgNow.Add(-30 * time.Hour)
				return imageSnap(imgs)
			},
			pol: func() *ecrimage.Policy {
				p := imagePolicy(100, 90, 80, 1)
				p.Repos[0].UntaggedOlderThan = 48 * time.Hour
				return p
			}(),
			want: want{deleted: []string{dig(1)}, class: map[string]string{dig(1): ecrimage.ClassUntagged}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planTwice(t, tc.snap(), tc.pol)
			got, wantDel := deleted(p), append([]string(nil), tc.want.deleted...)
			sort.Strings(got)
			sort.Strings(wantDel)
			if strings.Join(got, ",") != strings.Join(wantDel, ",") {
				t.Errorf("deleted %v\nwant    %v\n%s", shorts(got), shorts(tc.want.deleted), dump(p))
			}
			acts := imageActions(p)
			for dg, c := range tc.want.class {
				d := acts[dg]
				if d == nil {
					t.Errorf("%s: no decision, want class %q", ecrimage.ShortDigest(dg), c)
					continue
				}
				if d.Class != c {
					t.Errorf("%s: class %q (%s %s), want %q", ecrimage.ShortDigest(dg), d.Class, d.Action, d.Why(), c)
				}
			}
			for c, par := range tc.want.parents {
				var got []string
				if d := acts[c]; d != nil {
					got = ecrimage.DetailOf(d).Parents
				}
				if len(got) != 1 || got[0] != par {
					t.Errorf("%s: parents %v, want [%s]", ecrimage.ShortDigest(c), shorts(got), ecrimage.ShortDigest(par))
				}
			}
			for d := range p.All() {
				if d.Kind == ecrimage.Name && d.Action == engine.Keep && d.Why() == "" {
					t.Errorf("%s kept without a reason", ecrimage.ShortDigest(ecrimage.DetailOf(d).Digest))
				}
			}
		})
	}
}

func TestImageSummaryCountsAndBytes(t *testing.T) {
	p := planTwice(t, imageSnap(images(10)), imagePolicy(10, 9, 6, 2))
	repos := ecrimage.RepositoriesOf(p)
	if len(repos) != 1 {
		t.Fatalf("repositories %+v", repos)
	}
	r := repos[0]
	if r.Images != 10 || r.Limit != 10 || r.Delete != 4 || r.After != 6 || r.FreedBytes != 4*(100<<20) || !r.Warning {
		t.Errorf("summary %+v", r)
	}
	if r.Kept[ecrimage.ClassNewest] != 2 || r.Kept[ecrimage.ClassNotNeeded] != 4 {
		t.Errorf("kept %v, want 2 newest and 4 not needed", r.Kept)
	}
}

func TestImageFailClosed(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	for _, tc := range []struct {
		name    string
		mutate  func(*inventory.View)
		blocked bool
	}{
		{"complete", func(*inventory.View) {}, false},
		{"a cluster that could pull is incomplete", func(s *inventory.View) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "prod-b", Problems: []string{"list replicasets: forbidden"}})
		}, true},
		{"an incomplete cluster scoped to another account does not block", func(s *inventory.View) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "other", Accounts: []string{"012345678910"}})
		}, false},
		{"a cluster not asked for images", func(s *inventory.View) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "prod-c", Complete: true})
		}, true},
		{"an unreadable manifest directory", func(s *inventory.View) {
			s.Clouds[ecrimage.UsersRead] = []inventory.ImageSource{{Name: "manifests:/gitops", Problems: []string{"permission denied"}}}
		}, true},
		{"a partial repository listing", func(s *inventory.View) {
			ecrimage.RegistriesOf(s)[0].Repos[0].Complete, ecrimage.RegistriesOf(s)[0].Repos[0].Problem = false, "DescribeImages page 3: ServerException"
		}, true},
		{"an unparseable reference to the repository", func(s *inventory.View) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo},
				Where: "prod-a/web/Pod/x (app)", Problem: "template text in the tag"})
		}, true},
		{"a reference with a templated account", func(s *inventory.View) {
			s.Clouds[ecrimage.UsersRead] = []inventory.ImageSource{{Name: "manifests:/gitops", Complete: true, Images: []inventory.ImageUse{{
				Ref: inventory.ImageRef{Repo: inventory.RepoKey{Region: "us-east-1", Name: "team/app"}}, Where: "manifests:apps/x.yaml", Problem: "${ACCOUNT} in the host"}}}}
		}, true},
		// A tag says which image, but not which region's repository: it may
		// be this one, and the tag is then in use here.
		{"a tagged reference with no region", func(s *inventory.View) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: acct, Name: "team/app"}, Tag: "build-1"},
				Where: "prod-a/web/Pod/x (app)", Users: 1})
		}, true},
		{"a reference by digest with no region", func(s *inventory.View) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: acct, Name: "team/app"}, Digest: dig(1)},
				Where: "prod-a/web/Pod/x (app)", Users: 1})
		}, true},
		{"an unresolvable reference to another repository does not block", func(s *inventory.View) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/other"}},
				Where: "prod-a/web/Pod/x (app)", Problem: "template text in the tag"})
		}, false},
		{"an unparseable reference to the registry", func(s *inventory.View) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1"}},
				Where: "manifests:apps/x.yaml", Problem: "repository is a template"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := imageSnap(images(10))
			tc.mutate(&snap)
			p := planTwice(t, snap, pol)
			n := len(deleted(p))
			if tc.blocked && n != 0 {
				t.Fatalf("deleted %d images with incomplete evidence\n%s", n, dump(p))
			}
			if !tc.blocked && n != 4 {
				t.Fatalf("deleted %d, want 4\n%s", n, dump(p))
			}
			if tc.blocked {
				held := 0
				for d := range p.All() {
					if d.Kind == ecrimage.Name && d.Action == engine.Mark && d.Held {
						held++
					}
				}
				blocked := ""
				if repos := ecrimage.RepositoriesOf(p); len(repos) > 0 {
					blocked = repos[0].Blocked
				}
				if held != 4 || blocked == "" {
					t.Errorf("held %d, blocked %q; want 4 held with a reason\n%s", held, blocked, dump(p))
				}
			}
		})
	}
}

func TestImageGraceAndClockReset(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	snap := imageSnap(images(10))
	first := build(snap, pol, engine.NewState(), imgNow)
	if n := len(deleted(first)); n != 0 {
		t.Fatalf("deleted %d images on first sight", n)
	}
	if m := ecrimage.RepositoriesOf(first)[0].Mark; m != 4 {
		t.Fatalf("marked %d, want 4", m)
	}
	// Half the grace later, image 1 is in use: its clock is forgotten.
	snap2 := imageSnap(images(10), useDigest(dig(1), "prod-a/x/Pod/y (c)"))
	second := build(snap2, pol, first.State, imgNow.Add(30*time.Minute))
	if _, ok := second.State.Clock(ecrimage.ID(appRepo, dig(1))); ok {
		t.Error("an image in use kept its candidate clock")
	}
	// It stops being used: its clock starts again, so it is not due with the others.
	third := build(snap, pol, second.State, imgNow.Add(90*time.Minute))
	got := strings.Join(shorts(deleted(third)), ",")
	if strings.Contains(got, ecrimage.ShortDigest(dig(1))) {
		t.Errorf("image 1 deleted %s after its clock restarted: %s", "30m", got)
	}
	if len(deleted(third)) != 3 {
		t.Errorf("deleted %s, want images 2-4 whose grace elapsed", got)
	}
}

func TestImageCapsKeepIndexWithChildren(t *testing.T) {
	old := imgNow.Add(-900 * time.Hour)
	ix := inventory.Image{Digest: dig(100), Tags: []string{"a"}, PushedAt: old.Add(time.Hour), MediaType: inventory.MediaTypeOCIIndex,
		Children: []string{dig(101), dig(102)}, ChildrenKnown: true}
	imgs := append([]inventory.Image{ix, {Digest: dig(101), PushedAt: old}, {Digest: dig(102), PushedAt: old}}, images(10)...)
	pol := imagePolicy(13, 12, 1, 1)
	pol.MaxDeletesPerRun = 2
	p := planTwice(t, imageSnap(imgs), pol)
	acts := imageActions(p)
	// Oldest first: images(10) are pushed 58..49h ago, the index 899h ago, so
	// it is first and its children follow.
	child2 := acts[dig(102)]
	if action(acts, dig(100)) != engine.Delete || action(acts, dig(101)) != engine.Delete || child2 == nil || child2.Action != engine.Mark || !child2.Held {
		t.Fatalf("index %s, child1 %s, child2 %s\n%s", action(acts, dig(100)), action(acts, dig(101)), action(acts, dig(102)), dump(p))
	}
	pol.MaxDeletesPerRun = 0
	p = planTwice(t, imageSnap(imgs), pol)
	for d := range p.All() {
		if d.Action == engine.Delete {
			t.Fatalf("maxDeletesPerRun 0 deleted %s", d.ID)
		}
	}
	// A trim back to target is the repository's backlog, not a wave of
	// orphans: the breaker does not count it, the caps pace it.
	pol.MaxDeletesPerRun, pol.BreakerCandidates = 1000, 3
	p = planTwice(t, imageSnap(imgs), pol)
	if p.BreakerTripped || len(deleted(p)) != 12 {
		t.Fatalf("breaker tripped %v, deleted %d\n%s", p.BreakerTripped, len(deleted(p)), dump(p))
	}
}

// The breaker judges what looks unused: more untagged images due than
// breakerCandidates holds the whole kind, the trim's candidates with it.
func TestImageBreakerJudgesOrphansNotTheQuotaTrim(t *testing.T) {
	imgs := images(20) // tagged build-N, pushed 68..49h ago
	for i := range 6 {
		imgs = append(imgs, inventory.Image{Digest: dig(100 + i), PushedAt: imgNow.Add(-200 * time.Hour), MediaType: inventory.MediaTypeOCIManifest})
	}
	pol := imagePolicy(30, 27, 20, 1) // 26 images, under high-water: no trim
	pol.Repos[0].UntaggedOlderThan = 100 * time.Hour
	pol.BreakerCandidates = 5
	p := planTwice(t, imageSnap(imgs), pol)
	if !p.BreakerTripped || len(deleted(p)) != 0 || !strings.Contains(strings.Join(p.Blocked, "\n"), "breaker: 6 images") {
		t.Fatalf("6 untagged orphans > 5: tripped %v, deleted %d, blocked %q\n%s", p.BreakerTripped, len(deleted(p)), p.Blocked, dump(p))
	}
	pol.BreakerCandidates = 6
	p = planTwice(t, imageSnap(imgs), pol)
	if p.BreakerTripped || len(deleted(p)) == 0 {
		t.Fatalf("6 untagged orphans = 6: tripped %v, deleted %d\n%s", p.BreakerTripped, len(deleted(p)), dump(p))
	}
}

func TestImageChildWaitsForItsIndex(t *testing.T) {
	// The child became a candidate before its index (it was kept by another
	// index that has since gone): it must not be deleted while its index stays.
	old := imgNow.Add(-900 * time.Hour)
	ix := inventory.Image{Digest: dig(100), Tags: []string{"a"}, PushedAt: old, MediaType: inventory.MediaTypeOCIIndex,
		Children: []string{dig(101)}, ChildrenKnown: true}
	imgs := append([]inventory.Image{ix, {Digest: dig(101), PushedAt: old}}, images(10)...)
	pol := imagePolicy(12, 11, 10, 1)
	st := engine.NewState()
	st.Seen(ecrimage.ID(appRepo, dig(101)), "", imgNow.Add(-5*time.Hour))
	p := build(imageSnap(imgs), pol, st, imgNow)
	acts := imageActions(p)
	if action(acts, dig(101)) == engine.Delete && action(acts, dig(100)) != engine.Delete {
		t.Fatalf("child deleted while its index is %s", action(acts, dig(100)))
	}
}

func TestImagePolicyScope(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	pol.Repos = append([]ecrimage.RepoRule{{Name: "base/**", Match: regexp.MustCompile(`^base/.*$`), Protect: true}}, pol.Repos...)
	pol.Repos[1].Match = regexp.MustCompile(`^team/.*$`)
	snap := imageSnap(images(10))
	other := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "scratch"}, Images: inventory.NewImageTable(images(10)...), Complete: true}
	base := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "base/debian"}, Images: inventory.NewImageTable(images(10)...), Complete: true}
	tagged := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/tagged"}, Images: inventory.NewImageTable(images(10)...), Complete: true, Protected: true}
	ecrimage.RegistriesOf(&snap)[0].Repos = append(ecrimage.RegistriesOf(&snap)[0].Repos, other, base, tagged)
	p := planTwice(t, snap, pol)
	for d := range p.All() {
		if d.Action == engine.Delete && d.Name != "team/app" {
			t.Errorf("deleted %s in %s", ecrimage.ShortDigest(ecrimage.DetailOf(d).Digest), d.Name)
		}
	}
	if len(deleted(p)) != 4 {
		t.Errorf("deleted %d in team/app, want 4", len(deleted(p)))
	}
	for _, r := range ecrimage.RepositoriesOf(p) {
		switch r.Name {
		case "scratch":
			if r.Policy != "" || r.Kept[ecrimage.ClassNoPolicy] != 10 {
				t.Errorf("scratch: %+v", r)
			}
		case "base/debian", "team/tagged":
			if r.Kept[ecrimage.ClassProtected] != 10 || r.Blocked == "" {
				t.Errorf("%s: %+v", r.Name, r)
			}
		}
	}
}

func TestImagePendingConfirmed(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	st := engine.NewState()
	gone := ecrimage.ID(appRepo, dig(999))
	still := ecrimage.ID(appRepo, dig(1))
	st.Pending[gone] = engine.Pending{Kind: ecrimage.Name, Started: imgNow.Add(-time.Hour), Reason: "trim"}
	st.Pending[still] = engine.Pending{Kind: ecrimage.Name, Started: imgNow.Add(-time.Hour), Reason: "trim"}
	p := build(imageSnap(images(10)), pol, st, imgNow)
	if strings.Join(p.Confirmed, ",") != gone {
		t.Errorf("confirmed %v, want only %s", p.Confirmed, gone)
	}
	if len(p.State.Pending) != 0 {
		t.Errorf("pending left: %v", p.State.Pending)
	}
	// A repository listed incompletely cannot confirm anything.
	snap := imageSnap(images(10))
	ecrimage.RegistriesOf(&snap)[0].Repos[0].Complete = false
	p = build(snap, pol, st, imgNow)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 2 {
		t.Errorf("confirmed %v pending %v with an incomplete listing", p.Confirmed, p.State.Pending)
	}
}

func TestImageIDRoundTrip(t *testing.T) {
	repo := inventory.RepoKey{Account: acct, Region: "cn-north-1", Name: "docker-hub/library/nginx"}
	id := ecrimage.ID(repo, dig(7))
	r, d, err := ecrimage.ParseID(id)
	if err != nil || r != repo || d != dig(7) {
		t.Fatalf("ParseID(%q) = %v %q %v", id, r, d, err)
	}
	if repo.Host() != acct+".dkr.ecr.cn-north-1.amazonaws.com.cn" {
		t.Errorf("China host %s", repo.Host())
	}
	for _, bad := range []string{"", "ecr:", "ecr:a/b@x", "gce:a/b/c@d", "ecr:a/b/c"} {
		if _, _, err := ecrimage.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

// A child listed by two indexes goes only with the last of them: a trim that
// takes the older index alone leaves the child, which the newer still lists.
func TestImageChildOfTwoIndexesStaysWithTheNewer(t *testing.T) {
	old := imgNow.Add(-900 * time.Hour)
	child := inventory.Image{Digest: dig(101), PushedAt: old, MediaType: inventory.MediaTypeOCIManifest}
	ix1 := inventory.Image{Digest: dig(100), Tags: []string{"a"}, PushedAt: old.Add(time.Hour), MediaType: inventory.MediaTypeOCIIndex,
		Children: []string{dig(101)}, ChildrenKnown: true}
	ix2 := inventory.Image{Digest: dig(102), Tags: []string{"b"}, PushedAt: old.Add(2 * time.Hour), MediaType: inventory.MediaTypeOCIIndex,
		Children: []string{dig(101)}, ChildrenKnown: true}
	imgs := append([]inventory.Image{child, ix1, ix2}, images(10)...)
	// 13 images, high-water 12, target 12: one to trim, the oldest top-level
	// image, ix1.
	p := planTwice(t, imageSnap(imgs), imagePolicy(13, 12, 12, 1))
	acts := imageActions(p)
	if action(acts, dig(100)) != engine.Delete {
		t.Fatalf("the older index is %q, want delete\n%s", action(acts, dig(100)), dump(p))
	}
	if a := action(acts, dig(102)); a == engine.Delete || a == engine.Mark {
		t.Fatalf("the newer index is %q: the trim needed one image\n%s", a, dump(p))
	}
	if a := action(acts, dig(101)); a == engine.Delete || a == engine.Mark {
		t.Fatalf("the child of both is %q while the newer index still lists it\n%s", a, dump(p))
	}
}

// A repository listed lazily (as the ECR client lists it, while the plan
// streams) plans as a listed one does; one that comes back partial holds
// its trims and makes the registry's source, and so the plan, incomplete,
// though the registry looked complete before its repositories were listed.
func TestImageLazyListingFailsClosed(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	lazy := func(complete bool) inventory.View {
		s := imageSnap(nil)
		ecrimage.RegistriesOf(&s)[0].Repos[0].Load = func(rl *inventory.RepoListing) {
			rl.Images, rl.Complete = inventory.NewImageTable(images(10)...), complete
			if !complete {
				rl.Problem = "DescribeImages page 3: ServerException"
			}
		}
		return s
	}
	first := build(lazy(true), pol, engine.NewState(), imgNow.Add(-2*time.Hour))
	if p := build(lazy(true), pol, first.State, imgNow); len(deleted(p)) != 4 || p.Incomplete {
		t.Fatalf("a complete lazy listing: deleted %d, incomplete %v; want 4 as listed eagerly\n%s", len(deleted(p)), p.Incomplete, dump(p))
	}
	p := build(lazy(false), pol, first.State, imgNow)
	if n := len(deleted(p)); n != 0 || !p.Incomplete {
		t.Fatalf("a partial lazy listing: deleted %d, plan incomplete %v\n%s", n, p.Incomplete, dump(p))
	}
	for _, s := range p.Sources {
		if s.Kind == "ecr-registry" && (s.Complete || !strings.Contains(strings.Join(s.Problems, "; "), "ServerException")) {
			t.Fatalf("registry source %+v: want incomplete, naming the repository's problem", s)
		}
	}
}

// The engine's minimum age guards images as every kind's candidates: the
// limits carry it and every candidate its push time.
func TestImageCandidatesCarryTheEnginesMinimumAge(t *testing.T) {
	k := &ecrimage.Kind{Policy: imagePolicy(10, 8, 5, 1)}
	if k.Limits().MinAge != 24*time.Hour {
		t.Fatalf("limits' min age %s, want the policy's 24h", k.Limits().MinAge)
	}
	s := imageSnap(images(10))
	n := 0
	check := func(p *engine.Proposal) bool {
		if p.Candidate {
			n++
			if p.Created.IsZero() || !p.Created.Equal(p.Detail.(*ecrimage.Detail).PushedAt) {
				t.Fatalf("%s: created %v, want its push time", p.ID, p.Created)
			}
		}
		return true
	}
	ps := k.Propose(&s, imgNow)
	for i := range ps.Items {
		check(&ps.Items[i])
	}
	if ps.Stream != nil {
		ps.Stream(check)
	}
	if n == 0 {
		t.Fatal("no candidate proposed")
	}
}

// An image's owner is its repository's owner tag (notify.ownerLabel).
func TestImageOwnerIsItsRepositorysTag(t *testing.T) {
	s := imageSnap(images(10))
	ecrimage.RegistriesOf(&s)[0].Repos[0].Labels = map[string]string{"team": "etl"}
	p := enginetest.BuildWith(engine.Settings{OwnerLabel: "team"}, &s, []engine.Kind{&ecrimage.Kind{Policy: imagePolicy(10, 8, 5, 1)}}, engine.NewState(), imgNow)
	n := 0
	for d := range p.All() {
		if d.Action == engine.Mark || d.Action == engine.Delete {
			n++
			if d.Owner != "etl" {
				t.Fatalf("%s: owner %q, want etl", d.ID, d.Owner)
			}
		}
	}
	if n == 0 {
		t.Fatal("no candidate")
	}
}

// A repository missing from the registry's listing is gone only if the
// listing was complete: missing from a partial one it is unknown, so a
// pending delete is not confirmed, nor a clock forgotten, on no evidence.
func TestImagePresenceOfARepositoryMissingFromAPartialListing(t *testing.T) {
	other := inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/gone-or-unlisted"}
	id := ecrimage.ID(other, dig(1))
	for _, complete := range []bool{true, false} {
		snap := imageSnap(images(3))
		ecrimage.RegistriesOf(&snap)[0].Complete = complete
		if !complete {
			ecrimage.RegistriesOf(&snap)[0].Problem = "DescribeRepositories page 2: ThrottlingException"
		}
		props := (&ecrimage.Kind{Policy: imagePolicy(10, 9, 6, 1)}).Propose(&snap, imgNow)
		want := engine.Gone
		if !complete {
			want = engine.Unknown
		}
		if got := props.Presence(id); got != want {
			t.Errorf("registry listed completely %v: presence %v, want %v", complete, got, want)
		}
	}
}

// A compact row is made again into the decision of the image it came from,
// whether the repository mostly goes (its rows are the listing's table) or
// mostly stays (its rows are a copy of the candidates): same digest, tags,
// times, size and class, with some images kept in between.
func TestRowsRemakeTheirImages(t *testing.T) {
	for _, c := range []struct {
		name            string
		n, high, target int
	}{{"most go", 40, 20, 10}, {"few go", 40, 38, 36}} {
		t.Run(c.name, func(t *testing.T) {
			imgs := images(c.n)
			imgs[3].Tags = []string{"v1.2"} // protected: kept among those that go
			imgs[33].Tags = nil             // untagged, newer than the trim reaches
			imgs[33].LastPull = imgNow.Add(-30 * 24 * time.Hour)
			by := map[string]inventory.Image{}
			for _, img := range imgs {
				by[img.Digest] = img
			}
			ip := imagePolicy(c.n, c.high, c.target, 5)
			ip.Repos[0].UntaggedOlderThan = time.Hour
			p := planTwice(t, imageSnap(imgs), ip)
			goes, seen := 0, map[string]bool{}
			for d := range p.All() {
				det := ecrimage.DetailOf(d)
				img := by[det.Digest]
				if d.Action == engine.Keep {
					continue
				}
				goes++
				if seen[d.ID] || img.Digest == imgs[3].Digest || img.PushedAt.After(imgs[c.n-6].PushedAt) {
					t.Errorf("%s goes twice, or is protected or among the newest 5", d.ID)
				}
				seen[d.ID] = true
				if d.ID != ecrimage.ID(appRepo, img.Digest) || strings.Join(det.Tags, ",") != strings.Join(img.Tags, ",") ||
					!det.PushedAt.Equal(img.PushedAt) || !det.PulledAt.Equal(img.LastPull) || d.Frees.Of(ecrimage.Bytes) != img.SizeBytes {
					t.Errorf("%s made again as %+v, from %+v", d.ID, *det, img)
				}
				if want := ecrimage.ClassTrim; len(img.Tags) == 0 && d.Class != ecrimage.ClassUntagged || len(img.Tags) > 0 && d.Class != want {
					t.Errorf("%s: class %q", d.ID, d.Class)
				}
				if d.Group != appRepo.String() {
					t.Errorf("%s: group %q", d.ID, d.Group)
				}
			}
			if want := c.n - c.target + 1; goes != want {
				t.Errorf("%d images go, want %d", goes, want)
			}
		})
	}
}
