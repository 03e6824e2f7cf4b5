package lambda

import "reclaim.dev/reclaim/base/perms"

// Permissions of the Lambda image users (ecr.consumers).
var Permissions = perms.Set{Read: perms.Grants{IAM: []string{
	"lambda:ListFunctions", "lambda:ListVersionsByFunction", "lambda:GetFunction",
}}}
