package ecrimage

import "reclaim.dev/reclaim/base/perms"

// Permissions are the IAM actions of the image reads and deletes
// (providers/ecr makes the calls). Who may pull (the registry and
// repository policies) and the image users outside Kubernetes (ECS, Lambda,
// Batch) are shared reads, declared by their providers.
var Permissions = perms.Set{
	Read: perms.Grants{IAM: []string{
		"ecr:DescribeRepositories",
		"ecr:DescribeImages",      // every run, and again right before a delete
		"ecr:BatchGetImage",       // the body of each multi-arch index
		"ecr:ListTagsForResource", // the repository's protect tag
	}},
	Delete: perms.Grants{IAM: []string{"ecr:BatchDeleteImage"}},
}
