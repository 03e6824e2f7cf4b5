package ebssnapshot

import "reclaim.dev/reclaim/base/perms"

// Permissions: every run lists the account's own snapshots and those in
// the Recycle Bin, and asks what depends on reclaim's (AMIs registered from them, volumes being created
// from them), and each cluster's VolumeSnapshotContents, which name the
// CSI snapshots in use; with --apply the re-read (the same calls) and the
// delete.
var Permissions = perms.Set{
	Read: perms.Grants{IAM: []string{"ec2:DescribeSnapshots", "ec2:DescribeImages", "ec2:DescribeVolumes", "ec2:ListSnapshotsInRecycleBin"},
		RBAC: []perms.Rule{{Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotcontents", Verbs: []string{"list"}}}},
	Delete: perms.Grants{IAM: []string{"ec2:DeleteSnapshot"}},
}
