package k8spvc

import "reclaim.dev/reclaim/base/perms"

// Permissions: its tap lists Argo Workflows; with k8sPvcs.delete it
// re-reads each PVC and deletes it (deploy/components/pvc-deleter).
var Permissions = perms.Set{
	Read: perms.Grants{RBAC: []perms.Rule{
		{Group: "argoproj.io", Resource: "workflows", Verbs: []string{"list"}},
	}},
	Delete: perms.Grants{RBAC: []perms.Rule{
		{Resource: "persistentvolumeclaims", Verbs: []string{"get", "delete"}},
	}},
}
