package ecr

import "reclaim.dev/reclaim/base/perms"

// Permissions of who may pull (policy.go): the registry's and each
// repository's policy. The images' are ecrimage's.
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{"ecr:GetRegistryPolicy", "ecr:GetRepositoryPolicy"}}}
