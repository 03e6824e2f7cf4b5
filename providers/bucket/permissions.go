package bucket

import "reclaim.dev/reclaim/base/perms"

// ReadPermissions are a deleter's with fleet.snapshots: GetObject reads a
// cluster's record; ListBucket (on the bucket, limited to the prefix by an
// s3:prefix condition) is not called, but without it S3 answers a missing
// record with 403 instead of 404, and the report cannot tell "no agent
// has published" from "reclaim may not read" (deploy/aws).
var ReadPermissions = perms.Set{Read: perms.Grants{IAM: []string{"s3:GetObject", "s3:ListBucket"}}}

// WritePermissions are an agent's: PutObject on its own record's key only
// (deploy/aws/iam-policy-agent.json).
var WritePermissions = perms.Set{Read: perms.Grants{IAM: []string{"s3:PutObject"}}}
