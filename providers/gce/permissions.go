package gce

import "reclaim.dev/reclaim/base/perms"

// Permissions of the quota read: regions.get, for the headroom report and
// metrics. The disks' are gcedisk's.
var Permissions = perms.Set{Read: perms.Grants{GCP: []string{"compute.regions.get"}}}
