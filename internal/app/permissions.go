package app

import (
	"reclaim.dev/reclaim/base/perms"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/gke"
	"reclaim.dev/reclaim/providers/lambda"
	"reclaim.dev/reclaim/reconcile/state"
)

// SharedPermissions are those of the calls that are no one kind's: the
// collector's reads of every cluster, the state store, fleet discovery,
// assumed roles, subnet headroom, and the ECR evidence (who may
// pull, image users outside Kubernetes). The daemon's Lease is
// internal/daemon's.
var SharedPermissions = []perms.Set{
	kube.Permissions, state.Permissions,
	eks.Permissions, gke.Permissions, awsclient.Permissions,
	ec2.Permissions,
	ecr.Permissions, ecs.Permissions, lambda.Permissions, batch.Permissions,
}

// Permissions are what a run of every registered kind needs: each kind's
// own, those of the shared reads it relies on, and SharedPermissions.
// deploy/ grants exactly these (permissions_test.go).
func Permissions() perms.Set {
	sets := append([]perms.Set{}, SharedPermissions...)
	for _, m := range Registered {
		sets = append(sets, m.Permissions)
		for _, name := range m.Reads {
			sets = append(sets, kube.ReadPermissions[name])
		}
	}
	return perms.Union(sets...)
}

// RecordsPermissions are what a deleter with fleet.records needs on
// top of Permissions' cloud grants: read the agents' records
// (deploy/aws/iam-policy-records-read.json for S3,
// deploy/gcp/iam-role-records-reader.yaml for GCS). In clusters it needs only
// its state store (state.Permissions, when the state is a ConfigMap):
// it dials no cluster, and the kinds that delete in clusters are the
// agents'.
var RecordsPermissions = perms.Union(bucket.ReadPermissions, bucket.GCSReadPermissions)

// identityPermissions: an agent names its cluster in the record by the
// kube-system namespace's UID (publisher.publish), which it gets.
var identityPermissions = perms.Set{Read: perms.Grants{RBAC: []perms.Rule{
	{Resource: "namespaces", Verbs: []string{"get"}},
}}}

// AgentPermissions are what reclaim agent needs: in its cluster, every
// read and tap whatever its own kinds (the deleters' kinds find theirs in
// the record), its cluster's identity and its state store, and with
// --apply the deletes of the in-cluster kinds; in the bucket, writing its
// own record (S3's or GCS's, whichever fleet.records names). Its kinds' cloud reads are not here: the GCE disks the PVC
// kind reports frees with are read only when the agent's config has a gce
// section (deploy/README.md, "Agents").
func AgentPermissions() perms.Set {
	sets := []perms.Set{kube.Permissions, state.Permissions, identityPermissions, bucket.WritePermissions, bucket.GCSWritePermissions,
		awsclient.Permissions}
	for _, s := range kube.ReadPermissions {
		sets = append(sets, s)
	}
	for _, r := range Registered {
		// Its taps: the kind's RBAC reads.
		sets = append(sets, perms.Set{Read: perms.Grants{RBAC: r.Permissions.Read.RBAC}})
		if r.InCluster {
			sets = append(sets, perms.Set{Delete: perms.Grants{RBAC: r.Permissions.Delete.RBAC}})
		}
	}
	return perms.Union(sets...)
}

// WatchingAgentPermissions are what reclaim daemon --agent needs: an
// agent's, and list and watch on what it watches (kube.Watched)
// (deploy/components/agent-watch). With daemon.leaderElection, the
// daemon's Lease too (daemon.Permissions).
func WatchingAgentPermissions() perms.Set {
	return perms.Union(AgentPermissions(), kube.WatchPermissions)
}
