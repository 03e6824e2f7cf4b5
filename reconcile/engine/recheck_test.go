package engine

import (
	"errors"
	"fmt"
	"testing"

	"reclaim.dev/reclaim/base/outcome"
)

// Gone on re-read has one meaning for every kind: a read that wraps
// outcome.ErrNotFound. Any other error fails the batch; what was read
// is judged.
func TestRecheckEach(t *testing.T) {
	batch := []*Decision{{Name: "same"}, {Name: "gone"}, {Name: "changed"}}
	read := func(_ int, d *Decision) (string, error) {
		if d.Name == "gone" {
			return "", fmt.Errorf("re-read %s: %w", d.Name, outcome.ErrNotFound)
		}
		return d.Name, nil
	}
	judge := func(_ *Decision, now string) Verdict {
		if now == "changed" {
			return Changed("attached to i-1")
		}
		return Pass(nil)
	}
	vs, err := RecheckEach(batch, read, judge)
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Result != Go || vs[0].Labels == nil || vs[1].Result != GoneNow ||
		vs[2].Result != Skip || vs[2].Reason != "skipped: attached to i-1 since it was planned" {
		t.Errorf("verdicts %+v", vs)
	}
	// A failed read is no evidence the resource is gone: nothing goes.
	boom := errors.New("throttled")
	if vs, err := RecheckEach(batch, func(int, *Decision) (string, error) { return "", boom }, judge); !errors.Is(err, boom) || vs != nil {
		t.Errorf("a failed re-read: %v, %v", vs, err)
	}
}
