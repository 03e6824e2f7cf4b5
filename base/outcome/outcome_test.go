package outcome_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"reclaim.dev/reclaim/base/outcome"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want outcome.Outcome
	}{
		{"no error", nil, outcome.Deleted},
		{"gone, wrapped", fmt.Errorf("disks.delete d0: %w", outcome.ErrNotFound), outcome.Gone},
		{"changed, wrapped", fmt.Errorf("x: %w", outcome.MarkChanged(errors.New("precondition"))), outcome.Changed},
		{"in use", fmt.Errorf("InvalidNetworkInterface.InUse: %w", outcome.ErrInUse), outcome.Changed},
		{"refused", outcome.MarkRefused(errors.New("AccessDenied")), outcome.Refused},
		// Gone wins: a refusal that says the thing is gone is gone.
		{"refused but gone", outcome.MarkRefused(fmt.Errorf("x: %w", outcome.ErrNotFound)), outcome.Gone},
		{"no answer", context.DeadlineExceeded, outcome.Unknown},
		{"unmapped", errors.New("500 Internal Server Error"), outcome.Unknown},
	} {
		if got := outcome.Of(c.err); got != c.want {
			t.Errorf("%s: Of(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if err := outcome.MarkChanged(errors.New("bucket changed")); err.Error() != "bucket changed" {
		t.Errorf("a mark changes the message: %q", err)
	}
}
