package ecrimage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// API is what deleting needs from the ECR provider.
type API interface {
	// DescribeImages re-reads images; those that no longer exist are absent.
	DescribeImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.Image, error)
	// RepoTags re-reads a repository's resource tags (its opt-out); a
	// repository that is gone wraps ErrNotFound.
	RepoTags(ctx context.Context, repo inventory.RepoKey) (map[string]string, error)
	// DeleteImages deletes at most MaxBatch images by digest and returns the
	// per-image failures; a digest not among them was deleted.
	DeleteImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error)
}

// Recheck re-reads a batch (one repository: the engine batches by Group):
// gone, re-tagged or pulled since the plan means no delete. It re-reads the
// repository's tags too, and the engine checks the opt-out tag in them.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	repo, digests, err := k.batch(batch)
	if err != nil {
		return nil, err
	}
	gone := func() ([]engine.Verdict, error) { // the repository is gone, and its images with it
		out := make([]engine.Verdict, len(batch))
		for i := range out {
			out[i].Result = engine.GoneNow
		}
		return out, nil
	}
	var tags map[string]string
	if k.Policy.ProtectTag != "" {
		tags, err = k.API.RepoTags(ctx, repo)
		if engine.GoneOnReread(err) {
			return gone()
		}
		if err != nil {
			return nil, fmt.Errorf("re-read the tags of %s: %w", repo, err)
		}
	}
	now, err := k.API.DescribeImages(ctx, repo, digests)
	if engine.GoneOnReread(err) {
		return gone()
	}
	if err != nil {
		return nil, err
	}
	current := make(map[string]*inventory.Image, len(now))
	for i := range now {
		current[now[i].Digest] = &now[i]
	}
	// An image the answer leaves out is gone.
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (*inventory.Image, error) {
		if img := current[DetailOf(d).Digest]; img != nil {
			return img, nil
		}
		return nil, fmt.Errorf("image %s: %w", DetailOf(d).Digest, outcome.ErrNotFound)
	}, func(d *engine.Decision, img *inventory.Image) engine.Verdict {
		det := DetailOf(d)
		switch {
		case !sameTags(img.Tags, det.Tags):
			return engine.Verdict{Result: engine.Skip, Reason: fmt.Sprintf("skipped: tags changed since it was planned (now %s)", orDefault(strings.Join(img.Tags, ","), "untagged"))}
		case img.LastPull.After(det.PulledAt): // a pull since the plan (zero: never pulled then)
			return engine.Verdict{Result: engine.Skip, Reason: "skipped: pulled at " + fmtTime(img.LastPull) + ", since it was planned"}
		}
		return engine.Pass(tags) // the engine checks the opt-out tag
	})
}

// Delete deletes a batch with one BatchDeleteImage call. ImageNotFound, or a
// repository that is gone, is the shared NotFound contract.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	repo, digests, err := k.batch(batch)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Deleted, len(batch))
	failures, err := k.API.DeleteImages(ctx, repo, digests)
	if errors.Is(err, outcome.ErrNotFound) {
		for i := range out {
			out[i].Err = fmt.Errorf("repository %s: %w", repo, outcome.ErrNotFound)
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	failed := make(map[string]inventory.ImageFailure, len(failures))
	for _, f := range failures {
		failed[f.Digest] = f
	}
	for i, d := range batch {
		if f, bad := failed[DetailOf(d).Digest]; bad {
			out[i].Err = f.Err()
		}
	}
	return out, nil
}

// batch checks that a batch is one repository's and returns its digests,
// from each decision's detail: the plan parsed the identity once.
func (k *Kind) batch(batch []*engine.Decision) (inventory.RepoKey, []string, error) {
	if k.API == nil {
		return inventory.RepoKey{}, nil, errors.New("no ECR client")
	}
	if len(batch) == 0 || len(batch) > MaxBatch {
		return inventory.RepoKey{}, nil, fmt.Errorf("a batch of %d images (want 1..%d)", len(batch), MaxBatch)
	}
	repo := DetailOf(batch[0]).Repo
	digests := make([]string, len(batch))
	for i, d := range batch {
		det := DetailOf(d)
		if det.Digest == "" || det.Repo.Name == "" {
			return repo, nil, fmt.Errorf("image %s: its decision carries no repository and digest", d.ID)
		}
		if r := det.Repo; r != repo {
			return repo, nil, fmt.Errorf("a batch of images from %s and %s", repo, r)
		}
		digests[i] = det.Digest
	}
	return repo, digests, nil
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
