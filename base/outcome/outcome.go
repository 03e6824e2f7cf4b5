// Package outcome is the delete contract every provider keeps, in one
// spelling: what a delete (or the re-read before it) said of one resource. A
// provider maps its API's answers where it makes the call — gone
// (ErrNotFound), changed since the plan (MarkChanged), refused (MarkRefused)
// — and the engine decides what each means: no kind classifies errors
// itself. Like karpenter's cloudprovider.NodeClaimNotFoundError, a delete
// that finds the resource gone is a success to the caller.
package outcome

import "errors"

// ErrNotFound is the delete contract every provider keeps: Get and Delete
// return an error wrapping it when the resource does not exist, and callers
// treat it as success for Delete — the resource is gone, which was the goal.
var ErrNotFound = errors.New("not found")

// ErrInUse is what a delete wraps when the API says the resource is in use
// (an EC2 network interface attached again since it was listed): its
// outcome is Changed.
var ErrInUse = MarkChanged(errors.New("network interface in use"))

// Outcome is what a delete said of one resource.
type Outcome int

const (
	// Unknown: no answer, or an answer no provider mapped (a timeout, a
	// reset connection, a 5xx). The resource may be gone: its pending mark
	// stays, and the next run settles it from its listing.
	Unknown Outcome = iota
	// Deleted: the delete was done (no error).
	Deleted
	// Gone: it was gone already (the error wraps ErrNotFound).
	Gone
	// Changed: refused because it changed since it was planned (a
	// precondition failed, it is in use again): a skip, never a failure.
	Changed
	// Refused: the API answered no for this resource (denied, invalid): it
	// is still there, and its clock runs on.
	Refused
)

// Of is the outcome a delete's error says.
func Of(err error) Outcome {
	if err == nil {
		return Deleted
	}
	if errors.Is(err, ErrNotFound) {
		return Gone
	}
	var o interface{ DeleteOutcome() Outcome }
	if errors.As(err, &o) {
		return o.DeleteOutcome()
	}
	return Unknown
}

// MarkRefused marks err as the API's no for one resource: it is still there.
func MarkRefused(err error) error { return &outcomeError{err, Refused} }

// MarkChanged marks err as a delete refused because the resource changed
// since it was planned.
func MarkChanged(err error) error { return &outcomeError{err, Changed} }

type outcomeError struct {
	err error
	o   Outcome
}

func (e *outcomeError) Error() string          { return e.err.Error() }
func (e *outcomeError) Unwrap() error          { return e.err }
func (e *outcomeError) DeleteOutcome() Outcome { return e.o }
