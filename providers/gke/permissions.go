package gke

import "reclaim.dev/reclaim/base/perms"

// Permissions of fleet discovery: clusters.list over locations/-, and
// container.clusters.get, which GKE requires to authenticate to a cluster
// with the token reclaim mints (no call of reclaim's needs it).
var Permissions = perms.Set{
	Read: perms.Grants{GCP: []string{"container.clusters.list", "container.clusters.get"}},
}
