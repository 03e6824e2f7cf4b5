package reconcile

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
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

func imagePolicy(limit, high, target, newest int) *ImagePolicy {
	return &ImagePolicy{
		Repos: []RepoRule{{Name: "**", Match: regexp.MustCompile(`^.*$`), Limit: limit, HighWater: high, Target: target,
			KeepNewest: newest, KeepTags: []*regexp.Regexp{regexp.MustCompile(`^latest$`), regexp.MustCompile(`^v[^/]*$`)},
			KeepPulledWithin: 7 * 24 * time.Hour}},
		MinAge: 24 * time.Hour, Grace: time.Hour, MaxDeletes: 1000, MaxDeletePercent: 1, BreakerCandidates: 1000, HeadroomWarning: 0.9,
	}
}

func imageSnap(imgs []inventory.Image, uses ...inventory.ImageUse) inventory.Snapshot {
	return inventory.Snapshot{
		Clusters: []inventory.ClusterRefs{{Name: "prod-a", Complete: true, ImagesListed: true, Images: uses}},
		Registries: []inventory.RegistryListing{{Account: acct, Region: "us-east-1", Complete: true,
			Repos: []inventory.RepoListing{{Repo: appRepo, Images: imgs, Complete: true}}}},
	}
}

func useDigest(d, where string) inventory.ImageUse {
	return inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo, Digest: d}, Where: where, Users: 1}
}

func useTag(t, where string) inventory.ImageUse {
	return inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo, Tag: t}, Where: where, Users: 1}
}

// planTwice plans once to start the clocks and again after the grace period.
func planTwice(t *testing.T, snap inventory.Snapshot, ip *ImagePolicy) *Plan {
	t.Helper()
	first := Build(snap, Policy{Images: ip}, NewState(), imgNow.Add(-2*time.Hour))
	return Build(snap, Policy{Images: ip}, first.State, imgNow)
}

func imageActions(p *Plan) map[string]Decision {
	out := map[string]Decision{}
	for _, d := range p.Decisions {
		if d.Kind == KindImage {
			out[d.Digest] = d
		}
	}
	return out
}

func deleted(p *Plan) []string {
	var out []string
	for _, d := range p.Decisions {
		if d.Kind == KindImage && d.Action == Delete {
			out = append(out, d.Digest)
		}
	}
	return out
}

func TestImageTrimTable(t *testing.T) {
	type want struct {
		deleted []string          // exactly these are deleted, in this order
		class   map[string]string // digest -> class of its decision
		parents map[string]string // child digest -> its index, deleted first
	}
	idx := func(d string, children ...string) inventory.Image {
		return inventory.Image{Digest: d, MediaType: inventory.MediaTypeOCIIndex, Children: children, ChildrenKnown: true}
	}
	cases := []struct {
		name string
		snap func() inventory.Snapshot
		pol  *ImagePolicy
		want want
	}{
		{
			name: "below high-water nothing goes",
			snap: func() inventory.Snapshot { return imageSnap(images(8)) },
			pol:  imagePolicy(10, 9, 5, 1),
			want: want{deleted: nil},
		},
		{
			name: "above high-water the oldest unneeded go, down to target",
			snap: func() inventory.Snapshot { return imageSnap(images(10)) },
			pol:  imagePolicy(10, 9, 6, 2),
			want: want{deleted: []string{dig(1), dig(2), dig(3), dig(4)},
				class: map[string]string{dig(10): ClassNewest, dig(9): ClassNewest, dig(1): ClassTrim}},
		},
		{
			name: "in use by digest, by tag, in a ReplicaSet scaled to zero, protected tag, recently pulled, too young are kept",
			snap: func() inventory.Snapshot {
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
				class: map[string]string{dig(1): ClassInUse, dig(5): ClassInUse, dig(2): ClassProtectedTag,
					dig(3): ClassPulled, dig(4): ClassYoung}},
		},
		{
			name: "children of an index in use are kept though untagged and old",
			snap: func() inventory.Snapshot {
				imgs := images(10)
				ix := idx(dig(100), dig(101), dig(102))
				ix.Tags, ix.PushedAt = []string{"multi"}, imgNow.Add(-500*time.Hour)
				c1 := inventory.Image{Digest: dig(101), PushedAt: ix.PushedAt, MediaType: inventory.MediaTypeOCIManifest}
				c2 := inventory.Image{Digest: dig(102), PushedAt: ix.PushedAt, MediaType: inventory.MediaTypeOCIManifest}
				return imageSnap(append([]inventory.Image{ix, c1, c2}, imgs...), useTag("multi", "prod-a/api/Deployment/api (api)"))
			},
			pol: func() *ImagePolicy {
				p := imagePolicy(13, 12, 10, 1)
				p.Repos[0].UntaggedOlderThan = time.Hour
				return p
			}(),
			want: want{deleted: []string{dig(1), dig(2), dig(3)},
				class: map[string]string{dig(100): ClassInUse, dig(101): ClassIndexChild, dig(102): ClassIndexChild}},
		},
		{
			name: "an unneeded index goes with its children, index first; a child another kept index lists stays",
			snap: func() inventory.Snapshot {
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
				class:   map[string]string{dig(102): ClassIndexChild, dig(200): ClassProtectedTag, dig(101): ClassTrim},
				parents: map[string]string{dig(101): dig(100)}},
		},
		{
			name: "untagged and unreferenced go sooner, below high-water",
			snap: func() inventory.Snapshot {
				imgs := images(5)
				imgs[0].Tags, imgs[1].Tags = nil, nil
				imgs[1].PushedAt = imgNow.Add(-30 * time.Hour)
				return imageSnap(imgs)
			},
			pol: func() *ImagePolicy {
				p := imagePolicy(100, 90, 80, 1)
				p.Repos[0].UntaggedOlderThan = 48 * time.Hour
				return p
			}(),
			want: want{deleted: []string{dig(1)}, class: map[string]string{dig(1): ClassUntagged}},
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
			for d, c := range tc.want.class {
				if acts[d].Class != c {
					t.Errorf("%s: class %q (%s %s), want %q", ShortDigest(d), acts[d].Class, acts[d].Action, acts[d].Reason, c)
				}
			}
			for c, par := range tc.want.parents {
				if got := acts[c].Parents; len(got) != 1 || got[0] != par {
					t.Errorf("%s: parents %v, want [%s]", ShortDigest(c), shorts(got), ShortDigest(par))
				}
			}
			for _, d := range p.Decisions {
				if d.Kind == KindImage && d.Action == Keep && d.Reason == "" {
					t.Errorf("%s kept without a reason", ShortDigest(d.Digest))
				}
			}
		})
	}
}

func shorts(ds []string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ShortDigest(d)
	}
	return out
}

func dump(p *Plan) string {
	var b strings.Builder
	for _, d := range p.Decisions {
		fmt.Fprintf(&b, "  %s %s %s %s\n", d.Action, ShortDigest(d.Digest), d.Class, d.Reason)
	}
	for _, r := range p.Repositories {
		fmt.Fprintf(&b, "  repo %s %d/%d delete %d mark %d kept %v blocked %q\n", r.Name, r.Images, r.Limit, r.Delete, r.Mark, r.Kept, r.Blocked)
	}
	return b.String()
}

func TestImageSummaryCountsAndBytes(t *testing.T) {
	p := planTwice(t, imageSnap(images(10)), imagePolicy(10, 9, 6, 2))
	if len(p.Repositories) != 1 {
		t.Fatalf("repositories %+v", p.Repositories)
	}
	r := p.Repositories[0]
	if r.Images != 10 || r.Limit != 10 || r.Delete != 4 || r.After != 6 || r.FreedBytes != 4*(100<<20) || !r.Warning {
		t.Errorf("summary %+v", r)
	}
	if r.Kept[ClassNewest] != 2 || r.Kept[ClassNotNeeded] != 4 {
		t.Errorf("kept %v, want 2 newest and 4 not needed", r.Kept)
	}
}

func TestImageFailClosed(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	for _, tc := range []struct {
		name    string
		mutate  func(*inventory.Snapshot)
		blocked bool
	}{
		{"complete", func(*inventory.Snapshot) {}, false},
		{"a cluster that could pull is incomplete", func(s *inventory.Snapshot) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "prod-b", Problems: []string{"list replicasets: forbidden"}})
		}, true},
		{"an incomplete cluster scoped to another account does not block", func(s *inventory.Snapshot) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "other", Accounts: []string{"012345678910"}})
		}, false},
		{"a cluster not asked for images", func(s *inventory.Snapshot) {
			s.Clusters = append(s.Clusters, inventory.ClusterRefs{Name: "prod-c", Complete: true})
		}, true},
		{"an unreadable manifest directory", func(s *inventory.Snapshot) {
			s.ImageSources = []inventory.ImageSource{{Name: "manifests:/gitops", Problems: []string{"permission denied"}}}
		}, true},
		{"a partial repository listing", func(s *inventory.Snapshot) {
			s.Registries[0].Repos[0].Complete, s.Registries[0].Repos[0].Problem = false, "DescribeImages page 3: ServerException"
		}, true},
		{"an unparseable reference to the repository", func(s *inventory.Snapshot) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: appRepo},
				Where: "prod-a/web/Pod/x (app)", Problem: "template text in the tag"})
		}, true},
		{"a reference with a templated account", func(s *inventory.Snapshot) {
			s.ImageSources = []inventory.ImageSource{{Name: "manifests:/gitops", Complete: true, Images: []inventory.ImageUse{{
				Ref: inventory.ImageRef{Repo: inventory.RepoKey{Region: "us-east-1", Name: "team/app"}}, Where: "manifests:apps/x.yaml", Problem: "${ACCOUNT} in the host"}}}}
		}, true},
		{"an unresolvable reference to another repository does not block", func(s *inventory.Snapshot) {
			s.Clusters[0].Images = append(s.Clusters[0].Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/other"}},
				Where: "prod-a/web/Pod/x (app)", Problem: "template text in the tag"})
		}, false},
		{"an unparseable reference to the registry", func(s *inventory.Snapshot) {
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
				for _, d := range p.Decisions {
					if d.Kind == KindImage && d.Action == Mark && d.Held {
						held++
					}
				}
				if held != 4 || p.Repositories[0].Blocked == "" {
					t.Errorf("held %d, blocked %q; want 4 held with a reason", held, p.Repositories[0].Blocked)
				}
			}
		})
	}
}

func TestImageGraceAndClockReset(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	snap := imageSnap(images(10))
	first := Build(snap, Policy{Images: pol}, NewState(), imgNow)
	if n := len(deleted(first)); n != 0 {
		t.Fatalf("deleted %d images on first sight", n)
	}
	if first.Repositories[0].Mark != 4 {
		t.Fatalf("marked %d, want 4", first.Repositories[0].Mark)
	}
	// Half the grace later, image 1 is in use: its clock is forgotten.
	snap2 := imageSnap(images(10), useDigest(dig(1), "prod-a/x/Pod/y (c)"))
	second := Build(snap2, Policy{Images: pol}, first.State, imgNow.Add(30*time.Minute))
	if _, ok := second.State.Resources[ImageID(appRepo, dig(1))]; ok {
		t.Error("an image in use kept its candidate clock")
	}
	// It stops being used: its clock starts again, so it is not due with the others.
	third := Build(snap, Policy{Images: pol}, second.State, imgNow.Add(90*time.Minute))
	got := strings.Join(shorts(deleted(third)), ",")
	if strings.Contains(got, ShortDigest(dig(1))) {
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
	pol.MaxDeletes = 2
	p := planTwice(t, imageSnap(imgs), pol)
	acts := imageActions(p)
	// Oldest first: image 1..? are older than the index? images(10) are pushed
	// 58..49h ago; the index 899h ago, so it is first and its children follow.
	if acts[dig(100)].Action != Delete || acts[dig(101)].Action != Delete || acts[dig(102)].Action != Mark || !acts[dig(102)].Held {
		t.Fatalf("index %s, child1 %s, child2 %s (%s)", acts[dig(100)].Action, acts[dig(101)].Action, acts[dig(102)].Action, acts[dig(102)].Reason)
	}
	pol.MaxDeletes = 0
	p = planTwice(t, imageSnap(imgs), pol)
	for _, d := range p.Decisions {
		if d.Action == Delete {
			t.Fatalf("maxDeletesPerRun 0 deleted %s", d.ID)
		}
	}
	pol.MaxDeletes, pol.BreakerCandidates = 1000, 3
	p = planTwice(t, imageSnap(imgs), pol)
	if !p.BreakerTripped || len(deleted(p)) != 0 {
		t.Fatalf("breaker tripped %v, deleted %d", p.BreakerTripped, len(deleted(p)))
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
	st := NewState()
	st.Seen(ImageID(appRepo, dig(101)), imgNow.Add(-5*time.Hour))
	p := Build(imageSnap(imgs), Policy{Images: pol}, st, imgNow)
	acts := imageActions(p)
	if acts[dig(101)].Action == Delete && acts[dig(100)].Action != Delete {
		t.Fatalf("child deleted while its index is %s", acts[dig(100)].Action)
	}
}

func TestImagePolicyScope(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	pol.Repos = append([]RepoRule{{Name: "base/**", Match: regexp.MustCompile(`^base/.*$`), Protect: true}}, pol.Repos...)
	pol.Repos[1].Match = regexp.MustCompile(`^team/.*$`)
	snap := imageSnap(images(10))
	other := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "scratch"}, Images: images(10), Complete: true}
	base := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "base/debian"}, Images: images(10), Complete: true}
	tagged := inventory.RepoListing{Repo: inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/tagged"}, Images: images(10), Complete: true, Protected: true}
	snap.Registries[0].Repos = append(snap.Registries[0].Repos, other, base, tagged)
	p := planTwice(t, snap, pol)
	for _, d := range p.Decisions {
		if d.Action == Delete && d.Name != "team/app" {
			t.Errorf("deleted %s in %s", ShortDigest(d.Digest), d.Name)
		}
	}
	if len(deleted(p)) != 4 {
		t.Errorf("deleted %d in team/app, want 4", len(deleted(p)))
	}
	for _, r := range p.Repositories {
		switch r.Name {
		case "scratch":
			if r.Policy != "" || r.Kept[ClassNoPolicy] != 10 {
				t.Errorf("scratch: %+v", r)
			}
		case "base/debian", "team/tagged":
			if r.Kept[ClassProtected] != 10 || r.Blocked == "" {
				t.Errorf("%s: %+v", r.Name, r)
			}
		}
	}
}

func TestImagePendingConfirmed(t *testing.T) {
	pol := imagePolicy(10, 9, 6, 1)
	st := NewState()
	gone := ImageID(appRepo, dig(999))
	still := ImageID(appRepo, dig(1))
	st.Pending[gone] = Pending{Kind: KindImage, Started: imgNow.Add(-time.Hour), Reason: "trim"}
	st.Pending[still] = Pending{Kind: KindImage, Started: imgNow.Add(-time.Hour), Reason: "trim"}
	p := Build(imageSnap(images(10)), Policy{Images: pol}, st, imgNow)
	if strings.Join(p.Confirmed, ",") != gone {
		t.Errorf("confirmed %v, want only %s", p.Confirmed, gone)
	}
	if len(p.State.Pending) != 0 {
		t.Errorf("pending left: %v", p.State.Pending)
	}
	// A repository listed incompletely cannot confirm anything.
	snap := imageSnap(images(10))
	snap.Registries[0].Repos[0].Complete = false
	p = Build(snap, Policy{Images: pol}, st, imgNow)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 2 {
		t.Errorf("confirmed %v pending %v with an incomplete listing", p.Confirmed, p.State.Pending)
	}
}

func TestImageIDRoundTrip(t *testing.T) {
	repo := inventory.RepoKey{Account: acct, Region: "cn-north-1", Name: "docker-hub/library/nginx"}
	id := ImageID(repo, dig(7))
	r, d, err := ParseImageID(id)
	if err != nil || r != repo || d != dig(7) {
		t.Fatalf("ParseImageID(%q) = %v %q %v", id, r, d, err)
	}
	if repo.Host() != acct+".dkr.ecr.cn-north-1.amazonaws.com.cn" {
		t.Errorf("China host %s", repo.Host())
	}
	for _, bad := range []string{"", "ecr:", "ecr:a/b@x", "gce:a/b/c@d", "ecr:a/b/c"} {
		if _, _, err := ParseImageID(bad); err == nil {
			t.Errorf("ParseImageID(%q) accepted", bad)
		}
	}
}
