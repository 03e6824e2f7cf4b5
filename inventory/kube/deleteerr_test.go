package kube_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory/kube"
)

func TestDeleteError(t *testing.T) {
	gr := schema.GroupResource{Resource: "persistentvolumeclaims"}
	for _, c := range []struct {
		name string
		err  error
		want outcome.Outcome
	}{
		{"deleted", nil, outcome.Deleted},
		{"not found", apierrors.NewNotFound(gr, "x"), outcome.Gone},
		{"conflict: recreated", apierrors.NewConflict(gr, "x", errors.New("uid precondition")), outcome.Changed},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("rbac")), outcome.Refused},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), outcome.Refused},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "PersistentVolumeClaim"}, "x", nil), outcome.Refused},
		{"bad request", apierrors.NewBadRequest("no"), outcome.Refused},
		{"method not supported", apierrors.NewMethodNotSupported(gr, "delete"), outcome.Refused},
		{"timeout", apierrors.NewTimeoutError("slow", 1), outcome.Unknown},
		{"server error", apierrors.NewInternalError(errors.New("etcd")), outcome.Unknown},
		{"no answer", context.DeadlineExceeded, outcome.Unknown},
	} {
		if got := outcome.Of(kube.DeleteError(c.err, "pvc ns/x in a")); got != c.want {
			t.Errorf("%s: outcome %v, want %v", c.name, got, c.want)
		}
	}
}
