package k8spvc

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// Key is the kind's config section: whether finished-workflow PVCs are
// deleted, how long they wait and the per-run caps.
const Key = "k8sPvcs"

// Section is the k8sPvcs section. Every file has it, with its defaults
// when it leaves it out: the kind reports its PVCs whatever the file says.
type Section struct {
	// Delete lets reclaim delete the PVCs; false only reports them.
	Delete bool `json:"delete"`
	// Safety: grace (the disks' when the file leaves it out) and the
	// per-run caps, the kind's own: a cap shared with the disks would let
	// one kind's deletes use up the other's. A PVC's opt-out is
	// kubernetes.protectLabel, and the kind has no minAge (it never had).
	config.Safety
}

// Defaults of the k8sPvcs section, as configs/reference.yaml shows them.
const (
	defaultMaxDeletesPerRun    = 20
	defaultMaxDeletePercent    = config.Percent(0.10)
	defaultMaxDeleteSizePerRun = config.Size(0)
	defaultBreakerCandidates   = 200
)

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "whether k8s-pvc deletes PVCs of finished Argo Workflows, its grace and caps", Always: true,
		// Their place before the kind had its own section.
		Moved:  [][2]string{{"disks.deleteWorkflowPVCs", "delete"}, {"disks.workflowPVCs", ""}},
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{Caps: config.Caps{MaxDeletesPerRun: defaultMaxDeletesPerRun, MaxDeletePercent: defaultMaxDeletePercent,
				MaxDeleteSizePerRun: defaultMaxDeleteSizePerRun, BreakerCandidates: defaultBreakerCandidates}},
			GraceFrom: func(c *config.Config) config.Duration { return gcepd.DisksOf(c).Grace },
			Without:   []string{config.KeyProtectTag, config.KeyMinAge},
			GraceWhy:  "a PVC must be seen a candidate on more than one run before it is deleted",
		},
	})
}

// SectionOf is the file's k8sPvcs section, with its defaults when the
// file has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }
