package ecs

import "reclaim.dev/reclaim/base/perms"

// Permissions of the ECS image users (ecr.consumers).
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{
	"ecs:ListClusters", "ecs:ListTaskDefinitions", "ecs:DescribeTaskDefinition",
	"ecs:ListTasks", "ecs:DescribeTasks", "ecs:ListServices", "ecs:DescribeServices",
}}}
