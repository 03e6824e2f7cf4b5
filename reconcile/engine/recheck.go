package engine

import (
	"errors"

	"reclaim.dev/reclaim/base/outcome"
)

// RecheckEach is the re-read right before a delete, one resource at a time
// (as DeleteEach deletes): read returns a decision's resource as it is now,
// and judge says whether it may still go (Pass, or Changed). A read whose
// error wraps outcome.ErrNotFound means the resource is gone: GoneNow,
// the one meaning "gone on re-read" has for every kind. Any other error
// fails the whole re-read, and nothing of the batch is deleted.
func RecheckEach[T any](batch []*Decision, read func(i int, d *Decision) (T, error), judge func(d *Decision, now T) Verdict) ([]Verdict, error) {
	out := make([]Verdict, len(batch))
	for i, d := range batch {
		now, err := read(i, d)
		switch {
		case GoneOnReread(err):
			out[i] = Verdict{Result: GoneNow}
		case err != nil:
			return nil, err
		default:
			out[i] = judge(d, now)
		}
	}
	return out, nil
}

// GoneOnReread says whether a re-read's error means the resource is gone:
// it wraps outcome.ErrNotFound (a provider's NotFound, a 404).
func GoneOnReread(err error) bool { return errors.Is(err, outcome.ErrNotFound) }

// Changed is the verdict on a resource whose re-read differs from what was
// planned: a skip saying what changed ("attached to i-0abc" reads "skipped:
// attached to i-0abc since it was planned").
func Changed(what string) Verdict {
	return Verdict{Result: Skip, Reason: "skipped: " + what + " since it was planned"}
}
