package ec2

import "reclaim.dev/reclaim/base/perms"

// Permissions of the subnet read (headroom, and the subnets an interface
// may be in). The interfaces' are ec2interface's.
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{"ec2:DescribeSubnets"}}}
