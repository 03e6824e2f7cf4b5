package batch

import "reclaim.dev/reclaim/base/perms"

// Permissions of the Batch image users (ecr.consumers).
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{"batch:DescribeJobDefinitions"}}}
