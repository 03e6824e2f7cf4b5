package k8spod

import "reclaim.dev/reclaim/base/perms"

// Permissions: re-read each finished Pod right before deleting it
// (deploy/components/workload-deleter). Its reads are the collector's
// workloads read.
var Permissions = perms.Set{
	Delete: perms.Grants{RBAC: []perms.Rule{
		{Resource: "pods", Verbs: []string{"get", "delete"}},
	}},
}
