package batch

import "reclaim.dev/reclaim/internal/perms"

// Permissions of the Batch image users (ecr.consumers).
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{"batch:DescribeJobDefinitions"}}}
