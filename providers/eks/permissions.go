package eks

import "reclaim.dev/reclaim/base/perms"

// Permissions of fleet discovery (each account's enabled regions, then
// ListClusters and DescribeCluster in each). The token to each cluster is
// a presigned sts:GetCallerIdentity, which needs no grant.
var Permissions = perms.Set{
	Read:    perms.Grants{IAM: []string{"ec2:DescribeRegions", "eks:ListClusters", "eks:DescribeCluster"}},
	Outside: []string{"sts:GetCallerIdentity"},
}
