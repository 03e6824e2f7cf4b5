package eks

import "reclaim.dev/reclaim/base/perms"

// Permissions of fleet discovery: who each discovery identity is (one
// sts:GetCallerIdentity per identity and run, before its listings count for
// an account), each account's enabled regions, then ListClusters and
// DescribeCluster in each. GetCallerIdentity needs no grant in IAM (an
// explicit deny does not stop it); the policies name it so that they say
// every call discovery makes. The token to each cluster is a presigned
// GetCallerIdentity too.
var Permissions = perms.Set{
	Read: perms.Grants{IAM: []string{"sts:GetCallerIdentity", "ec2:DescribeRegions", "eks:ListClusters", "eks:DescribeCluster"}},
}
