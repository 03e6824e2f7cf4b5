package ebsvolume

import "reclaim.dev/reclaim/base/perms"

// Permissions: the volume listing and storage quotas every run reads, the
// taps' PVs and pods in every cluster, and with --apply the re-read (the
// same DescribeVolumes), the delete and the snapshot before it (tagging a
// snapshot as it is created needs ec2:CreateTags).
var Permissions = perms.Set{
	Read: perms.Grants{
		IAM: []string{"ec2:DescribeVolumes", "servicequotas:ListServiceQuotas"},
		RBAC: []perms.Rule{
			{Resource: "persistentvolumes", Verbs: []string{"list"}},
			{Resource: "pods", Verbs: []string{"list"}},
		},
	},
	Delete: perms.Grants{IAM: []string{"ec2:DeleteVolume", "ec2:CreateSnapshot", "ec2:CreateTags", "ec2:DescribeSnapshots"}},
}
