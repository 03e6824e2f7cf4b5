package ecr_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/contracttest"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
)

// The ECR provider keeps the delete contract the applier relies on, with
// images named repo@digest: a re-read of a gone image, a repeated delete
// (ECR's per-image ImageNotFound) and a missing repository are NotFound.
func TestDeleteContract(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	f.AddRepository(acct, "r", t0, nil)
	c := newClient(t, f.URL())
	var n atomic.Int32
	split := func(id string) (string, string) {
		repo, digest, _ := strings.Cut(id, "@")
		return repo, digest
	}
	contracttest.Run(t, contracttest.Deleter{
		Get: func(ctx context.Context, id string) error {
			repo, digest := split(id)
			got, err := c.DescribeImages(ctx, repo, []string{digest})
			if err != nil {
				return err
			}
			if len(got) == 0 {
				return fmt.Errorf("image %s: %w", id, inventory.ErrNotFound)
			}
			return nil
		},
		Delete: func(ctx context.Context, id string) error {
			repo, digest := split(id)
			fails, err := c.DeleteImages(ctx, repo, []string{digest})
			if err != nil {
				return err
			}
			for _, fl := range fails {
				if fl.Code == inventory.ImageNotFound {
					return fmt.Errorf("image %s: %w", id, inventory.ErrNotFound)
				}
				return fmt.Errorf("image %s: %s: %s", id, fl.Code, fl.Reason)
			}
			return nil
		},
		Existing: func(t *testing.T) string {
			im := ecrfake.NewManifest(fmt.Sprint(n.Add(1)), t0)
			f.AddImage(acct, "r", im)
			return "r@" + im.Digest
		},
		Missing: "never-was@" + ecrfake.Digest("never-was"),
	})
}
