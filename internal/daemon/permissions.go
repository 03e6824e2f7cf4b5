package daemon

import "reclaim.dev/reclaim/base/perms"

// Permissions of leader election on the daemon's Lease (client-go
// leaderelection: get it, create it the first time, update to acquire and
// renew). Only the daemon needs them: deploy grants them in
// overlays/daemon and the chart's daemon mode.
var Permissions = perms.Set{Read: perms.Grants{RBAC: []perms.Rule{
	{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "create", "update"}},
}}}
