package ebsvolume

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
)

// The ebs section is ebsbase's, which ebs-snapshot stands on too.
const (
	Key            = ebsbase.Key
	EvidenceCSI    = ebsbase.EvidenceCSI
	EvidenceInTree = ebsbase.EvidenceInTree
)

type (
	Section = ebsbase.Section
	Region  = ebsbase.Region
)

// SectionOf is the ebs section of cfg, nil when absent.
func SectionOf(cfg *config.Config) *Section { return ebsbase.SectionOf(cfg) }
