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
	// Grace is how long a PVC must have been a candidate before it is
	// deleted; nil waits as long as the disks (disks.grace).
	Grace *config.Duration `json:"grace,omitempty"`
	// Caps are the kind's own: a cap shared with the disks would let one
	// kind's deletes use up the other's, and read as if it bounded both.
	config.Caps
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
		Key: Key, Doc: "whether k8s-pvc deletes PVCs of finished Argo Workflows, and its caps", Always: true,
		// Their place before the kind had its own section.
		Moved: [][2]string{{"disks.deleteWorkflowPVCs", "delete"}, {"disks.workflowPVCs", ""}},
		Defaults: func(s *Section, set func(string) bool) {
			config.Fill(set, "maxDeletesPerRun", &s.MaxDeletesPerRun, defaultMaxDeletesPerRun)
			config.Fill(set, "maxDeletePercent", &s.MaxDeletePercent, defaultMaxDeletePercent)
			config.Fill(set, "maxDeleteSizePerRun", &s.MaxDeleteSizePerRun, defaultMaxDeleteSizePerRun)
			config.Fill(set, "breakerCandidates", &s.BreakerCandidates, defaultBreakerCandidates)
		},
		Validate: func(s *Section, report *config.Report) {
			if s.Grace != nil && *s.Grace <= 0 {
				report.Add("grace", "must be more than 0 — a PVC must be seen on more than one run before it is deleted (remove the key to wait as long as the disks)")
			}
			config.CheckCaps(report, "", s.Caps)
		},
	})
}

// SectionOf is the file's k8sPvcs section, with its defaults when the
// file has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Safety is the kind's grace and caps: its own grace, else the disks'.
func (s *Section) Safety(disks *gcepd.Disks) config.Safety {
	grace := disks.Grace
	if s.Grace != nil {
		grace = *s.Grace
	}
	return config.Safety{Grace: grace, Caps: s.Caps}
}
