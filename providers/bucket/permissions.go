package bucket

import "reclaim.dev/reclaim/base/perms"

// ReadPermissions are a deleter's with fleet.records: ListBucket (on
// the bucket, limited to the prefix by an s3:prefix condition) lists the
// records once a pass, their versions and sizes (List), and without it S3
// answers a missing record with 403 instead of 404; GetObject reads a
// record that changed (deploy/aws).
var ReadPermissions = perms.Set{Read: perms.Grants{IAM: []string{"s3:GetObject", "s3:ListBucket"}}}

// WritePermissions are an agent's: PutObject on its own record's key only
// (deploy/aws/iam-policy-agent.json).
var WritePermissions = perms.Set{Read: perms.Grants{IAM: []string{"s3:PutObject"}}}
