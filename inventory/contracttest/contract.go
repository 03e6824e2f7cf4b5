// Package contracttest holds the delete contract every provider keeps, as a
// test any provider's package can run against its wire-level fake.
package contracttest

import (
	"context"
	"errors"
	"testing"

	"reclaim.dev/reclaim/base/outcome"
)

// Deleter is one provider, seen through the contract.
type Deleter struct {
	// Get re-reads a resource; it wraps outcome.ErrNotFound when it is gone.
	Get func(ctx context.Context, id string) error
	// Delete deletes a resource and waits until it is gone; it wraps
	// outcome.ErrNotFound when there was nothing to delete.
	Delete func(ctx context.Context, id string) error
	// Existing makes a fresh resource that may be deleted and returns its id.
	Existing func(t *testing.T) string
	// Missing is the id of a resource that does not exist.
	Missing string
}

// Run checks the contract: Delete removes what exists, Get and Delete of what
// does not exist answer NotFound (so a retried or repeated delete is success to
// the applier), and no other error is dressed up as NotFound.
func Run(t *testing.T, d Deleter) {
	ctx := context.Background()
	t.Run("delete removes the resource", func(t *testing.T) {
		id := d.Existing(t)
		if err := d.Get(ctx, id); err != nil {
			t.Fatalf("get before delete: %v", err)
		}
		if err := d.Delete(ctx, id); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if err := d.Get(ctx, id); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("get after delete: %v, want ErrNotFound", err)
		}
	})
	t.Run("second delete is NotFound", func(t *testing.T) {
		id := d.Existing(t)
		if err := d.Delete(ctx, id); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if err := d.Delete(ctx, id); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
	})
	t.Run("missing is NotFound", func(t *testing.T) {
		if err := d.Get(ctx, d.Missing); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("get: %v, want ErrNotFound", err)
		}
		if err := d.Delete(ctx, d.Missing); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("delete: %v, want ErrNotFound", err)
		}
	})
}
