package ec2interface

import "reclaim.dev/reclaim/base/perms"

// Permissions are the IAM actions of the interface reads and deletes
// (providers/ec2 makes the calls). The subnets (headroom) are a shared
// read, declared by providers/ec2; the pods and nodes holding addresses
// are the collector's workloads read.
var Permissions = perms.Set{
	Read:   perms.Grants{IAM: []string{"ec2:DescribeNetworkInterfaces"}},
	Delete: perms.Grants{IAM: []string{"ec2:DeleteNetworkInterface"}},
}
