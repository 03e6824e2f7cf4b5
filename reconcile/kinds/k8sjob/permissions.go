package k8sjob

import "reclaim.dev/reclaim/base/perms"

// Permissions: re-read each finished Job right before deleting it
// (deploy/components/workload-deleter). Its reads are the collector's
// workloads read.
var Permissions = perms.Set{
	Delete: perms.Grants{RBAC: []perms.Rule{
		{Group: "batch", Resource: "jobs", Verbs: []string{"get", "delete"}},
	}},
}
