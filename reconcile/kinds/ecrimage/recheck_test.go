package ecrimage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// rereadAPI answers the re-read from a map of digests to images; a gone
// repository wraps outcome.ErrNotFound.
type rereadAPI struct {
	images   map[string]inventory.Image
	repoGone bool
}

func (a *rereadAPI) DescribeImages(_ context.Context, repo inventory.RepoKey, digests []string) ([]inventory.Image, error) {
	if a.repoGone {
		return nil, fmt.Errorf("repository %s: %w", repo.Name, outcome.ErrNotFound)
	}
	var out []inventory.Image
	for _, d := range digests {
		if img, ok := a.images[d]; ok {
			out = append(out, img)
		}
	}
	return out, nil
}

func (a *rereadAPI) RepoTags(context.Context, inventory.RepoKey) (map[string]string, error) {
	return map[string]string{"team": "a"}, nil
}

func (a *rereadAPI) DeleteImages(context.Context, inventory.RepoKey, []string) ([]inventory.ImageFailure, error) {
	return nil, nil
}

// The re-read right before a trim: an image the answer leaves out, or a
// repository that is gone, is gone; re-tagged or pulled since the plan is a
// skip; the rest goes, with the repository's tags for the opt-out check.
func TestRecheckRereadsTheRepository(t *testing.T) {
	repo := inventory.RepoKey{Account: "123456789012", Region: "us-east-1", Name: "team-a/api"}
	planned := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	api := &rereadAPI{images: map[string]inventory.Image{
		"sha256:same":   {Digest: "sha256:same", Tags: []string{"v1"}, LastPull: planned},
		"sha256:retag":  {Digest: "sha256:retag", Tags: []string{"v2", "latest"}},
		"sha256:pulled": {Digest: "sha256:pulled", Tags: []string{"v3"}, LastPull: planned.Add(time.Hour)},
	}}
	k := &ecrimage.Kind{API: api, Policy: &ecrimage.Policy{Safety: config.Safety{ProtectTag: "reclaim.dev/protect"}}}
	var batch []*engine.Decision
	for _, c := range []struct {
		digest string
		tags   []string
	}{{"sha256:same", []string{"v1"}}, {"sha256:gone", nil}, {"sha256:retag", []string{"v2"}}, {"sha256:pulled", []string{"v3"}}} {
		batch = append(batch, &engine.Decision{ID: ecrimage.ID(repo, c.digest), Name: c.digest,
			Detail: &ecrimage.Detail{Repo: repo, Digest: c.digest, Tags: c.tags, PulledAt: planned}})
	}
	vs, err := k.Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		r    engine.Recheck
		says string
	}{{engine.Go, ""}, {engine.GoneNow, ""}, {engine.Skip, "tags changed since it was planned (now v2,latest)"}, {engine.Skip, "pulled at"}}
	for i, w := range want {
		if vs[i].Result != w.r || !strings.Contains(vs[i].Reason, w.says) {
			t.Errorf("%s: %+v, want %v %q", batch[i].Name, vs[i], w.r, w.says)
		}
	}
	if vs[0].Labels["team"] != "a" {
		t.Errorf("a go without the repository's tags: the engine could not check the opt-out: %+v", vs[0])
	}
	api.repoGone = true
	vs, err = k.Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Result != engine.GoneNow {
			t.Errorf("%s in a gone repository: %+v", batch[i].Name, v)
		}
	}
}
