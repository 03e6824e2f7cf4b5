package engine_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"reclaim.dev/reclaim/reconcile/engine"
)

func TestKubeDeleteOutcome(t *testing.T) {
	gr := schema.GroupResource{Resource: "persistentvolumeclaims"}
	for _, c := range []struct {
		name            string
		err             error
		gone, skip, bad bool // the object's result
		unknown         bool // the batch fails
	}{
		{name: "deleted"},
		{name: "not found", err: apierrors.NewNotFound(gr, "x"), gone: true},
		{name: "conflict: recreated", err: apierrors.NewConflict(gr, "x", errors.New("uid precondition")), skip: true},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "x", errors.New("rbac")), bad: true},
		{name: "unauthorized", err: apierrors.NewUnauthorized("token expired"), bad: true},
		{name: "invalid", err: apierrors.NewInvalid(schema.GroupKind{Kind: "PersistentVolumeClaim"}, "x", nil), bad: true},
		{name: "bad request", err: apierrors.NewBadRequest("no"), bad: true},
		{name: "timeout", err: apierrors.NewTimeoutError("slow", 1), unknown: true},
		{name: "server error", err: apierrors.NewInternalError(errors.New("etcd")), unknown: true},
		{name: "no answer", err: context.DeadlineExceeded, unknown: true},
	} {
		res, unknown := engine.KubeDeleteOutcome(c.err, "pvc ns/x in a")
		var skip *engine.SkipError
		switch {
		case (unknown != nil) != c.unknown:
			t.Errorf("%s: unknown %v", c.name, unknown)
		case c.gone != errors.Is(res, engine.ErrNotFound):
			t.Errorf("%s: gone? %v", c.name, res)
		case c.skip != errors.As(res, &skip):
			t.Errorf("%s: skip? %v", c.name, res)
		case c.bad && (res == nil || errors.Is(res, engine.ErrNotFound) || errors.As(res, &skip)):
			t.Errorf("%s: want this object's failure, got %v", c.name, res)
		case !c.gone && !c.skip && !c.bad && res != nil:
			t.Errorf("%s: want deleted, got %v", c.name, res)
		}
	}
}
