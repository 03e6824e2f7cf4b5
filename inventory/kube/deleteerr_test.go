package kube_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
)

func TestDeleteError(t *testing.T) {
	gr := schema.GroupResource{Resource: "persistentvolumeclaims"}
	for _, c := range []struct {
		name string
		err  error
		want inventory.Outcome
	}{
		{"deleted", nil, inventory.OutcomeDeleted},
		{"not found", apierrors.NewNotFound(gr, "x"), inventory.OutcomeGone},
		{"conflict: recreated", apierrors.NewConflict(gr, "x", errors.New("uid precondition")), inventory.OutcomeChanged},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("rbac")), inventory.OutcomeRefused},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), inventory.OutcomeRefused},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "PersistentVolumeClaim"}, "x", nil), inventory.OutcomeRefused},
		{"bad request", apierrors.NewBadRequest("no"), inventory.OutcomeRefused},
		{"method not supported", apierrors.NewMethodNotSupported(gr, "delete"), inventory.OutcomeRefused},
		{"timeout", apierrors.NewTimeoutError("slow", 1), inventory.OutcomeUnknown},
		{"server error", apierrors.NewInternalError(errors.New("etcd")), inventory.OutcomeUnknown},
		{"no answer", context.DeadlineExceeded, inventory.OutcomeUnknown},
	} {
		if got := inventory.OutcomeOf(kube.DeleteError(c.err, "pvc ns/x in a")); got != c.want {
			t.Errorf("%s: outcome %v, want %v", c.name, got, c.want)
		}
	}
}
