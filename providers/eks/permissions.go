package eks

import "reclaim.dev/reclaim/internal/perms"

// Permissions of fleet discovery (ListClusters, DescribeCluster). The
// token to each cluster is a presigned sts:GetCallerIdentity, which needs
// no grant.
var Permissions = perms.Set{
	Read:    perms.Grants{IAM: []string{"eks:ListClusters", "eks:DescribeCluster"}},
	Outside: []string{"sts:GetCallerIdentity"},
}
