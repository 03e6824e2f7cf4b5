package awsclient

import "reclaim.dev/reclaim/base/perms"

// Permissions: a configured roleARN (e.g. ecr.registries[].roleARN) is
// assumed with sts:AssumeRole. deploy/'s policies do not grant it: the user
// grants it on each role they configure (deploy/README.md, "Another
// account's registry"), which trusts reclaim's role
// (deploy/aws/trust-policy-cross-account.json).
var Permissions = perms.Set{Outside: []string{"sts:AssumeRole"}}
