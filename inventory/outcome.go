package inventory

import "errors"

// Outcome is what a delete said of one resource. A provider maps its API's
// answers to it (ErrNotFound, Refused, Changed) where it makes the call, and
// the engine decides what each means: no kind classifies errors itself.
type Outcome int

const (
	// OutcomeUnknown: no answer, or an answer no provider mapped (a
	// timeout, a reset connection, a 5xx). The resource may be gone: its
	// pending mark stays, and the next run settles it from its listing.
	OutcomeUnknown Outcome = iota
	// OutcomeDeleted: the delete was done (no error).
	OutcomeDeleted
	// OutcomeGone: it was gone already (the error wraps ErrNotFound).
	OutcomeGone
	// OutcomeChanged: refused because it changed since it was planned (a
	// precondition failed, it is in use again): a skip, never a failure.
	OutcomeChanged
	// OutcomeRefused: the API answered no for this resource (denied,
	// invalid): it is still there, and its clock runs on.
	OutcomeRefused
)

// OutcomeOf is the outcome a delete's error says.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeDeleted
	}
	if errors.Is(err, ErrNotFound) {
		return OutcomeGone
	}
	var o interface{ DeleteOutcome() Outcome }
	if errors.As(err, &o) {
		return o.DeleteOutcome()
	}
	return OutcomeUnknown
}

// Refused marks err as the API's no for one resource: it is still there.
func Refused(err error) error { return &outcomeError{err, OutcomeRefused} }

// Changed marks err as a delete refused because the resource changed since
// it was planned.
func Changed(err error) error { return &outcomeError{err, OutcomeChanged} }

type outcomeError struct {
	err error
	o   Outcome
}

func (e *outcomeError) Error() string          { return e.err.Error() }
func (e *outcomeError) Unwrap() error          { return e.err }
func (e *outcomeError) DeleteOutcome() Outcome { return e.o }
