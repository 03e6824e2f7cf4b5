package bucket

import "reclaim.dev/reclaim/base/perms"

// GCSReadPermissions are a deleter's with fleet.records.gcs: objects.get
// reads a cluster's record, objects.list lists the records' generations
// (what changed since the last pass); without list, GCS may answer a
// missing record with 403 instead of 404 (deploy/gcp/iam-role-records-reader.yaml).
var GCSReadPermissions = perms.Set{Read: perms.Grants{GCP: []string{"storage.objects.get", "storage.objects.list"}}}

// GCSWritePermissions are an agent's: objects.create writes its record,
// and replacing an object GCS counts as a delete too, so an agent's
// second record needs objects.delete; both only on its own record's
// name, by an IAM condition (deploy/gcp/iam-role-agent.yaml).
var GCSWritePermissions = perms.Set{Read: perms.Grants{GCP: []string{"storage.objects.create", "storage.objects.delete"}}}
