package engine

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// KubeDeleteOutcome classifies what a Kubernetes API server answered to a
// delete (made with a UID precondition) of what, for every Kubernetes kind
// alike. It returns the object's result (Deleted.Err) or, when the server
// gave no answer, an error that fails the batch:
//
//   - nil: deleted;
//   - NotFound: gone already (wraps ErrNotFound);
//   - Conflict: the precondition failed, it was recreated since the re-read:
//     skipped;
//   - a refusal (Forbidden, Unauthorized, Invalid, BadRequest,
//     MethodNotSupported): this object failed, and the batch goes on;
//   - anything else (a timeout, a reset connection, a 5xx): the outcome is
//     unknown, so the batch stops there and the next run settles it from the
//     listing.
func KubeDeleteOutcome(err error, what string) (result, unknown error) {
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w", what, ErrNotFound), nil
	case apierrors.IsConflict(err):
		return Skipped("skipped: recreated since it was re-read (%v)", err), nil
	case isKubeRefusal(err):
		return fmt.Errorf("delete %s: %w", what, err), nil
	default:
		return nil, fmt.Errorf("delete %s: %w", what, err)
	}
}

// isKubeRefusal says whether the API server answered with a status meaning
// the delete was not done (as opposed to no answer, whose outcome is unknown).
func isKubeRefusal(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsUnauthorized(err)
}
