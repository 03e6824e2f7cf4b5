package ecrimage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/state"
)

// memImages is an in-memory ecrimage.API with ECR's delete rules.
type memImages struct {
	imgs      map[string]inventory.Image // digest -> image
	fail      map[string]inventory.ImageFailure
	failCall  error
	tags      map[string]string // the repository's resource tags
	tagsErr   error
	tagReads  int
	describes int
	deletes   [][]string
}

func newMemImages(imgs []inventory.Image) *memImages {
	m := &memImages{imgs: map[string]inventory.Image{}, fail: map[string]inventory.ImageFailure{}}
	for _, i := range imgs {
		m.imgs[i.Digest] = i
	}
	return m
}

func (m *memImages) DescribeImages(_ context.Context, _ inventory.RepoKey, digests []string) ([]inventory.Image, error) {
	m.describes++
	var out []inventory.Image
	for _, d := range digests {
		if i, ok := m.imgs[d]; ok {
			out = append(out, i)
		}
	}
	return out, nil
}

func (m *memImages) RepoTags(context.Context, inventory.RepoKey) (map[string]string, error) {
	m.tagReads++
	return m.tags, m.tagsErr
}

func (m *memImages) DeleteImages(_ context.Context, _ inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error) {
	if len(digests) > ecrimage.MaxBatch {
		return nil, fmt.Errorf("%d imageIds: Member must have length less than or equal to 100", len(digests))
	}
	m.deletes = append(m.deletes, append([]string(nil), digests...))
	if m.failCall != nil {
		return nil, m.failCall
	}
	var fails []inventory.ImageFailure
	for _, d := range digests {
		if f, ok := m.fail[d]; ok {
			fails = append(fails, f)
			continue
		}
		if _, ok := m.imgs[d]; !ok {
			fails = append(fails, inventory.ImageFailure{Digest: d, Code: inventory.ImageNotFound, Reason: "Requested image not found"})
			continue
		}
		for _, other := range m.imgs {
			for _, c := range other.Children {
				if c == d {
					fails = append(fails, inventory.ImageFailure{Digest: d, Code: "ImageReferencedByManifestList", Reason: "Requested image referenced by manifest list: [" + other.Digest + "]"})
				}
			}
		}
		if len(fails) == 0 || fails[len(fails)-1].Digest != d {
			delete(m.imgs, d)
		}
	}
	return fails, nil
}

func (m *memImages) remaining() []inventory.Image {
	var out []inventory.Image
	for _, i := range m.imgs {
		out = append(out, i)
	}
	return out
}

// imageApplier applies plans of the image kind (policy ip) through m.
func imageApplier(m *memImages, ip *ecrimage.Policy, store *state.MemoryStore, log *bytes.Buffer) *engine.Applier {
	return &engine.Applier{Kinds: []engine.Kind{&ecrimage.Kind{Policy: ip, API: m}}, Store: store, Audit: audit.New(log), Log: zap.NewNop(),
		Now: func() time.Time { return imgNow }, RunID: "t", MaxConsecutiveFailures: 5}
}

func TestApplyImages250In3Batches(t *testing.T) {
	imgs := images(400)
	m := newMemImages(imgs)
	pol := imagePolicy(400, 300, 150, 10)
	p := planTwice(t, imageSnap(imgs), pol)
	if n := len(deleted(p)); n != 250 {
		t.Fatalf("planned %d deletions, want 250", n)
	}
	var log bytes.Buffer
	out, err := imageApplier(m, pol, state.NewMemoryStore(engine.NewState()), &log).Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.deletes) != 3 || len(m.deletes[0]) != 100 || len(m.deletes[2]) != 50 {
		t.Fatalf("delete calls %d (sizes %d...), want 3 of 100,100,50", len(m.deletes), len(m.deletes[0]))
	}
	if m.describes != 3 || out.Deleted != 250 || out.FreedBytes != 250*(100<<20) || len(m.imgs) != 150 {
		t.Fatalf("describes %d deleted %d freed %d left %d", m.describes, out.Deleted, out.FreedBytes, len(m.imgs))
	}
	if got := strings.Count(log.String(), `"result":"deleted"`); got != 250 {
		t.Errorf("audit has %d deleted records, want 250", got)
	}
}

func TestApplyImagesDryRunCallsNothing(t *testing.T) {
	imgs := images(20)
	m := newMemImages(imgs)
	pol := imagePolicy(20, 10, 5, 1)
	p := planTwice(t, imageSnap(imgs), pol)
	var log bytes.Buffer
	if _, err := imageApplier(m, pol, state.NewMemoryStore(engine.NewState()), &log).Apply(context.Background(), p, false); err != nil {
		t.Fatal(err)
	}
	if m.describes != 0 || len(m.deletes) != 0 || len(m.imgs) != 20 {
		t.Fatalf("dry-run made %d describes and %d deletes", m.describes, len(m.deletes))
	}
}

func TestApplyImagesIndexBeforeChildren(t *testing.T) {
	old := imgNow.Add(-900 * time.Hour)
	ix := inventory.Image{Digest: dig(100), Tags: []string{"a"}, PushedAt: old, MediaType: inventory.MediaTypeOCIIndex,
		Children: []string{dig(101), dig(102)}, ChildrenKnown: true}
	imgs := append([]inventory.Image{ix, {Digest: dig(101), PushedAt: old}, {Digest: dig(102), PushedAt: old}}, images(10)...)
	m := newMemImages(imgs)
	pol := imagePolicy(13, 12, 9, 1)
	p := planTwice(t, imageSnap(imgs), pol)
	out, err := imageApplier(m, pol, state.NewMemoryStore(engine.NewState()), &bytes.Buffer{}).Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 || len(m.deletes) != 2 || !strings.Contains(strings.Join(m.deletes[0], ","), dig(100)) ||
		strings.Join(m.deletes[1], ",") != dig(101)+","+dig(102) {
		t.Fatalf("failed %d, calls %v", out.Failed, m.deletes)
	}
}

func TestApplyImagesPartialFailureRetriedNextRun(t *testing.T) {
	imgs := images(20)
	m := newMemImages(imgs)
	m.fail[dig(2)] = inventory.ImageFailure{Digest: dig(2), Code: "KmsError", Reason: "kms key disabled"}
	delete(m.imgs, dig(3)) // gone since the plan: ImageNotFound counts as done
	store := state.NewMemoryStore(engine.NewState())
	var log bytes.Buffer
	snap := imageSnap(imgs)
	pol := imagePolicy(20, 10, 15, 1)
	first := build(snap, pol, engine.NewState(), imgNow.Add(-2*time.Hour))
	p := build(snap, pol, first.State, imgNow)
	out, err := imageApplier(m, pol, store, &log).Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for _, r := range out.Results {
		res[r.ID] = r.Result + " " + r.Error
	}
	if !strings.HasPrefix(res[ecrimage.ID(appRepo, dig(2))], "failed KmsError") || !strings.HasPrefix(res[ecrimage.ID(appRepo, dig(3))], "already-gone") {
		t.Fatalf("results %v", res)
	}
	if out.Failed != 1 || out.Deleted != 4 {
		t.Fatalf("failed %d deleted %d", out.Failed, out.Deleted)
	}
	// Next run: the failed image is still a due candidate (its clock ran on) and is tried again.
	delete(m.fail, dig(2))
	st, _ := store.Load(context.Background())
	if len(st.Pending) != 0 {
		t.Fatalf("pending after a definite per-image failure: %v", st.Pending)
	}
	next := build(imageSnap(m.remaining()), pol, st, imgNow.Add(time.Hour))
	if action(imageActions(next), dig(2)) != engine.Delete {
		t.Fatalf("failed image not due next run:\n%s", dump(next))
	}
	out, _ = imageApplier(m, pol, store, &log).Apply(context.Background(), next, true)
	if _, still := m.imgs[dig(2)]; still || out.Failed != 0 {
		t.Fatalf("retry: failed %d, still there %v", out.Failed, still)
	}
}

func TestApplyImagesRereadSkips(t *testing.T) {
	imgs := images(20)
	m := newMemImages(imgs)
	pol := imagePolicy(20, 10, 17, 1)
	p := planTwice(t, imageSnap(imgs), pol)
	// Between plan and delete: image 1 got a release tag, image 2 was pulled.
	i1 := m.imgs[dig(1)]
	i1.Tags = append(i1.Tags, "v2.0.0")
	m.imgs[dig(1)] = i1
	i2 := m.imgs[dig(2)]
	i2.LastPull = imgNow
	m.imgs[dig(2)] = i2
	out, err := imageApplier(m, pol, state.NewMemoryStore(engine.NewState()), &bytes.Buffer{}).Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Skipped != 2 || out.Deleted != 1 {
		t.Fatalf("skipped %d deleted %d: %+v", out.Skipped, out.Deleted, out.Results)
	}
	if _, ok := m.imgs[dig(1)]; !ok {
		t.Error("re-tagged image deleted")
	}
	if _, ok := m.imgs[dig(2)]; !ok {
		t.Error("image pulled since the plan deleted")
	}
}

// The repository's protect tag, put on after the plan, keeps every image of
// the batch: the re-read shows the repository's tags to the engine, whatever
// the tag's value. A failed re-read of the tags deletes nothing either.
func TestApplyImagesRereadOptOut(t *testing.T) {
	for _, c := range []struct {
		name    string
		tags    map[string]string
		tagsErr error
		deleted int
	}{
		{"untagged", map[string]string{}, nil, 3},
		{"other tags", map[string]string{"team": "a"}, nil, 3},
		{"protected", map[string]string{"reclaim.dev/protect": "true"}, nil, 0},
		{"protected false", map[string]string{"reclaim.dev/protect": "false"}, nil, 0},
		{"tags unread", nil, errors.New("ThrottlingException"), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			imgs := images(20)
			m := newMemImages(imgs)
			m.tags, m.tagsErr = c.tags, c.tagsErr
			pol := imagePolicy(20, 10, 17, 1)
			pol.ProtectTag = "reclaim.dev/protect"
			p := planTwice(t, imageSnap(imgs), pol)
			out, err := imageApplier(m, pol, state.NewMemoryStore(engine.NewState()), &bytes.Buffer{}).Apply(context.Background(), p, true)
			if err != nil && c.tagsErr == nil {
				t.Fatal(err)
			}
			if out.Deleted != c.deleted || len(m.imgs) != 20-c.deleted || m.tagReads != 1 {
				t.Fatalf("deleted %d (want %d), %d left, %d tag reads: %+v", out.Deleted, c.deleted, len(m.imgs), m.tagReads, out.Results)
			}
			if c.deleted == 0 && c.tagsErr == nil && (out.Skipped != 3 || !strings.Contains(out.Results[0].Reason, "protected by reclaim.dev/protect=")) {
				t.Fatalf("skipped %d: %+v", out.Skipped, out.Results)
			}
		})
	}
}

func TestApplyImagesCallFailureKeepsPendingAndStops(t *testing.T) {
	imgs := images(1000)
	m := newMemImages(imgs)
	m.failCall = errors.New("AccessDeniedException: not authorized to perform ecr:BatchDeleteImage")
	store := state.NewMemoryStore(engine.NewState())
	pol := imagePolicy(1000, 100, 100, 1)
	p := planTwice(t, imageSnap(imgs), pol)
	out, err := imageApplier(m, pol, store, &bytes.Buffer{}).Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.deletes) != 5 || out.Stopped == "" {
		t.Fatalf("delete calls %d, stopped %q; want 5 then stop", len(m.deletes), out.Stopped)
	}
	st, _ := store.Load(context.Background())
	if len(st.Pending) != 500 {
		t.Errorf("pending %d, want 500 (a failed call may have deleted; next run settles)", len(st.Pending))
	}
}
