package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/inventory"
)

// ImageAPI is what the applier needs from the ECR provider.
type ImageAPI interface {
	// DescribeImages re-reads images; those that no longer exist are absent.
	DescribeImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.Image, error)
	// DeleteImages deletes at most MaxImageBatch images by digest and returns
	// the per-image failures; a digest not among them was deleted.
	DeleteImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error)
}

// MaxImageBatch is BatchDeleteImage's limit on imageIds.
const MaxImageBatch = 100

// imageBatches groups the image deletions of a plan by repository, in
// batches of at most MaxImageBatch: first the images no index lists, then
// children, so that an index is always gone before its children are deleted
// (ECR refuses a child an index still lists: ImageReferencedByManifestList).
func imageBatches(p *Plan) [][]Decision {
	type group struct{ tops, children []Decision }
	var order []string
	groups := map[string]*group{}
	for _, d := range p.Decisions {
		if d.Kind != KindImage || d.Action != Delete {
			continue
		}
		g := groups[d.Repository]
		if g == nil {
			g = &group{}
			groups[d.Repository] = g
			order = append(order, d.Repository)
		}
		if len(d.Parents) > 0 {
			g.children = append(g.children, d)
		} else {
			g.tops = append(g.tops, d)
		}
	}
	var out [][]Decision
	for _, r := range order {
		for _, list := range [][]Decision{groups[r].tops, groups[r].children} {
			for len(list) > 0 {
				n := min(len(list), MaxImageBatch)
				out = append(out, list[:n])
				list = list[n:]
			}
		}
	}
	return out
}

// applyImages deletes the plan's images batch by batch: re-read, mark
// pending, delete, record each image's result.
func (a *Applier) applyImages(ctx context.Context, st *State, p *Plan, out *Outcome, fails *int) {
	for _, batch := range imageBatches(p) {
		if out.Stopped != "" || ctx.Err() != nil {
			for _, d := range batch {
				out.Results = append(out.Results, Result{Kind: d.Kind, ID: d.ID, Result: "not-attempted", Reason: orDefault(out.Stopped, "run cancelled"), Bytes: d.Bytes})
			}
			continue
		}
		ok := a.imageBatch(ctx, st, batch, out)
		if ok {
			*fails = 0
		} else {
			*fails++
		}
		if a.MaxConsecutiveFailures > 0 && *fails >= a.MaxConsecutiveFailures {
			out.Stopped = fmt.Sprintf("stopped after %d delete calls failed in a row", *fails)
		}
	}
}

// imageBatch handles one batch and reports whether the delete call itself worked.
func (a *Applier) imageBatch(ctx context.Context, st *State, batch []Decision, out *Outcome) bool {
	repo, _, err := ParseImageID(batch[0].ID)
	log := a.Log.With(zap.String("kind", KindImage), zap.String("repository", batch[0].Repository), zap.Bool("dry_run", false))
	record := func(d Decision, result, reason, errText string) {
		r := Result{Kind: d.Kind, ID: d.ID, Reason: orDefault(reason, d.Reason), Bytes: d.Bytes}
		out.add(a.done(log.With(zap.String("id", d.ID)), r, result, errText))
	}
	if err != nil {
		for _, d := range batch {
			record(d, "failed", "", err.Error())
		}
		return false
	}
	digests := make([]string, len(batch))
	for i, d := range batch {
		digests[i] = d.Digest
	}
	// The second look: gone, re-tagged or pulled since the plan means skip.
	now, err := a.Images.DescribeImages(ctx, repo, digests)
	if err != nil {
		for _, d := range batch {
			record(d, "failed", "", "re-read before delete: "+err.Error())
		}
		return false
	}
	current := make(map[string]inventory.Image, len(now))
	for _, img := range now {
		current[img.Digest] = img
	}
	var goes []Decision
	for _, d := range batch {
		img, ok := current[d.Digest]
		switch {
		case !ok:
			st.forget(d.ID)
			record(d, "already-gone", "", "")
		case !sameTags(img.Tags, d.Tags):
			st.forget(d.ID)
			record(d, "skipped", fmt.Sprintf("skipped: tags changed since it was planned (now %s)", orDefault(strings.Join(img.Tags, ","), "untagged")), "")
		case d.PulledAt == nil && !img.LastPull.IsZero() || d.PulledAt != nil && img.LastPull.After(*d.PulledAt):
			st.forget(d.ID)
			record(d, "skipped", "skipped: pulled at "+fmtTime(img.LastPull)+", since it was planned", "")
		default:
			goes = append(goes, d)
		}
	}
	if len(goes) == 0 {
		_ = a.Store.Save(ctx, *st)
		return true
	}
	for _, d := range goes {
		st.Pending[d.ID] = Pending{Kind: d.Kind, Started: a.Now(), Reason: d.Reason}
	}
	if err := a.Store.Save(ctx, *st); err != nil {
		for _, d := range goes {
			delete(st.Pending, d.ID)
			record(d, "failed", "", "save state before delete: "+err.Error())
		}
		return false
	}
	digests = digests[:0]
	for _, d := range goes {
		digests = append(digests, d.Digest)
	}
	failures, err := a.Images.DeleteImages(ctx, repo, digests)
	if err != nil {
		// Keep the pending marks: if the call did delete, the next run sees
		// the images gone and records them then.
		for _, d := range goes {
			record(d, "failed", "", err.Error())
		}
		_ = a.Store.Save(ctx, *st)
		return false
	}
	failed := make(map[string]inventory.ImageFailure, len(failures))
	for _, f := range failures {
		failed[f.Digest] = f
	}
	for _, d := range goes {
		delete(st.Pending, d.ID)
		f, bad := failed[d.Digest]
		switch {
		case !bad:
			st.forget(d.ID)
			record(d, "deleted", "", "")
		case f.Code == inventory.ImageNotFound:
			st.forget(d.ID)
			record(d, "already-gone", "", "")
		default:
			// ECR said no for this image: it is still there, its clock runs on,
			// and the next run tries again.
			record(d, "failed", "", fmt.Sprintf("%s: %s", f.Code, f.Reason))
		}
	}
	if err := a.Store.Save(ctx, *st); err != nil {
		log.Warn("deleted, but could not save the state", zap.Error(err))
	}
	return true
}

func sameTags(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
