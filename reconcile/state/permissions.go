package state

import "reclaim.dev/reclaim/base/perms"

// Permissions of the ConfigMap store, in its own namespace: create, get and
// delete its chunks (named after each save), update the head and journal.
// Dry runs need them too: grace periods count from the first-seen times.
var Permissions = perms.Set{Read: perms.Grants{RBAC: []perms.Rule{
	{Resource: "configmaps", Verbs: []string{"create", "get", "delete", "update"}},
}}}
