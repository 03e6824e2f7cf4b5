package kube

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"reclaim.dev/reclaim/base/outcome"
)

// DeleteError maps what an API server answered to a delete (made with a UID
// precondition) of what to the delete outcomes (outcome.Of), for
// every Kubernetes kind alike:
//
//   - nil: deleted;
//   - NotFound: gone already;
//   - Conflict: the precondition failed, it was recreated since the
//     re-read: changed;
//   - a refusal (Forbidden, Unauthorized, Invalid, BadRequest,
//     MethodNotSupported): refused;
//   - anything else (a timeout, a reset connection, a 5xx): unknown.
func DeleteError(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w", what, outcome.ErrNotFound)
	case apierrors.IsConflict(err):
		return outcome.MarkChanged(fmt.Errorf("recreated since it was re-read (%w)", err))
	case isRefusal(err):
		return outcome.MarkRefused(fmt.Errorf("delete %s: %w", what, err))
	default:
		return fmt.Errorf("delete %s: %w", what, err)
	}
}

// isRefusal says whether the API server answered with a status meaning the
// delete was not done (as opposed to no answer, whose outcome is unknown).
func isRefusal(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsUnauthorized(err)
}
