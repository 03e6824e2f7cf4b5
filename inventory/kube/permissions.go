package kube

import (
	"reclaim.dev/reclaim/base/perms"
	"reclaim.dev/reclaim/inventory"
)

// Permissions are the collector's reads of every cluster, whatever the
// kinds: which PVs, claims and mounting pods hold a disk or a claim.
var Permissions = perms.Set{Read: perms.Grants{RBAC: []perms.Rule{
	{Resource: "persistentvolumes", Verbs: []string{"list"}},
	{Resource: "persistentvolumeclaims", Verbs: []string{"list"}},
	{Resource: "pods", Verbs: []string{"list"}},
}}}

// ReadPermissions are those of each shared read a kind may rely on
// (inventory.ReadImages, ReadWorkloads).
var ReadPermissions = map[string]perms.Set{
	// Every image a pod template could still pull, rollback targets included.
	inventory.ReadImages: {Read: perms.Grants{RBAC: []perms.Rule{
		{Group: "apps", Resource: "deployments", Verbs: []string{"list"}},
		{Group: "apps", Resource: "replicasets", Verbs: []string{"list"}},
		{Group: "apps", Resource: "statefulsets", Verbs: []string{"list"}},
		{Group: "apps", Resource: "daemonsets", Verbs: []string{"list"}},
		{Group: "apps", Resource: "controllerrevisions", Verbs: []string{"list"}},
		{Group: "batch", Resource: "jobs", Verbs: []string{"list"}},
		{Group: "batch", Resource: "cronjobs", Verbs: []string{"list"}},
		{Resource: "pods", Verbs: []string{"list"}},
	}}},
	// Jobs, their CronJobs, pods, the nodes holding addresses and the
	// namespaces' owner labels.
	inventory.ReadWorkloads: {Read: perms.Grants{RBAC: []perms.Rule{
		{Group: "batch", Resource: "jobs", Verbs: []string{"list"}},
		{Group: "batch", Resource: "cronjobs", Verbs: []string{"list"}},
		{Resource: "pods", Verbs: []string{"list"}},
		{Resource: "nodes", Verbs: []string{"list"}},
		{Resource: "namespaces", Verbs: []string{"list"}},
	}}},
}
