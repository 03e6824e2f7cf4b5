package app

import (
	"reclaim.dev/reclaim/internal/perms"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gke"
	"reclaim.dev/reclaim/providers/lambda"
	"reclaim.dev/reclaim/reconcile/state"
)

// SharedPermissions are those of the calls that are no one kind's: the
// collector's reads of every cluster, the state store, fleet discovery,
// assumed roles, quota and subnet headroom, and the ECR evidence (who may
// pull, image users outside Kubernetes). The daemon's Lease is
// internal/daemon's.
var SharedPermissions = []perms.Set{
	kube.Permissions, state.Permissions,
	eks.Permissions, gke.Permissions, awsclient.Permissions,
	gce.Permissions, ec2.Permissions,
	ecr.Permissions, ecs.Permissions, lambda.Permissions, batch.Permissions,
}

// Permissions are what a run of every registered kind needs: each kind's
// own, those of the shared reads it relies on, and SharedPermissions.
// deploy/ grants exactly these (permissions_test.go).
func Permissions() perms.Set {
	sets := append([]perms.Set{}, SharedPermissions...)
	for _, r := range Registered {
		sets = append(sets, r.Permissions)
		for _, name := range r.Reads {
			sets = append(sets, kube.ReadPermissions[name])
		}
	}
	return perms.Union(sets...)
}
