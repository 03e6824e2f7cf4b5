package finished

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/labels"

	config "reclaim.dev/reclaim/configs"
)

// Retention is the policy of the jobs and pods sections: finished objects
// kept for a while, then deleted.
type Retention struct {
	// Succeeded and Failed are how long after finishing an object is kept
	// (failed ones longer: people debug them).
	Succeeded config.Duration `json:"succeeded"`
	Failed    config.Duration `json:"failed"`
	// Namespaces limit where reclaim looks (globs); exclude wins.
	Namespaces Namespaces `json:"namespaces"`
	// Selector is a label selector objects must match ("" matches all).
	Selector string `json:"selector"`
	// RetentionAnnotation on an object overrides its retention ("2h",
	// "7d", or "never").
	RetentionAnnotation string `json:"retentionAnnotation"`
	// Safety: grace is how long an object must have been past its
	// retention, seen on more than one run, before it is deleted; and the
	// per-run caps. The opt-out is kubernetes.protectLabel, and retention
	// stands for a minimum age.
	config.Safety
	// DeletesPerSecond paces deletes per cluster so the API server is never starved.
	DeletesPerSecond float64 `json:"deletesPerSecond"`

	// Jobs only. KeepCronJobHistory keeps the newest successfulJobsHistoryLimit
	// and failedJobsHistoryLimit Jobs of each CronJob whatever their age.
	KeepCronJobHistory *bool `json:"keepCronJobHistory,omitempty"`
	// TTLGrace: a Job with ttlSecondsAfterFinished is the TTL controller's;
	// reclaim deletes it only when it is this far past due.
	TTLGrace *config.Duration `json:"ttlGrace,omitempty"`

	// Pods only. OwnerKinds are owner kinds besides Job whose finished pods
	// no controller acts on (e.g. TaskRun): such pods may be deleted.
	OwnerKinds []string `json:"ownerKinds,omitempty"`
}

// Namespaces are include and exclude globs.
type Namespaces struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// Defaults of the jobs and pods sections (each kind gives its own
// succeeded and failed retention).
const (
	defaultRetentionAnnotation = "reclaim.dev/retention"
	defaultRetentionGrace      = config.Duration(time.Hour)
	defaultRetentionMaxDeletes = 10000 // see reference.yaml: half the history at most, a 100,000 backlog in about ten runs
	defaultRetentionMaxPercent = config.Percent(0.5)
	defaultRetentionBreaker    = 200000
	defaultRetentionRate       = 20.0
	defaultTTLGrace            = config.Duration(time.Hour)
)

var (
	defaultExcludeNS = []string{"kube-system"}
	ownerKindName    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	maxPerSecond     = 1000.0
)

// RegisterSection registers a jobs or pods section (from the kind's init):
// the two share Retention, with their own defaults for how long a
// succeeded and a failed object is kept, and the jobs-only and pods-only
// keys refused in the other. check, if set, compares it with the rest of
// the file.
func RegisterSection(key, doc string, jobs bool, succeeded, failed config.Duration, check func(r *Retention, c *config.Config, report *config.Report)) {
	config.Register(config.SectionSpec[Retention]{Key: key, Doc: doc,
		Defaults: func(r *Retention, set func(string) bool) { r.defaults(set, jobs, succeeded, failed) },
		Validate: func(r *Retention, report *config.Report) { r.validate(report, jobs) },
		Check:    check,
		Safety:   func(r *Retention) *config.Safety { return &r.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{Grace: defaultRetentionGrace,
				Caps: config.Caps{MaxDeletesPerRun: defaultRetentionMaxDeletes, MaxDeletePercent: defaultRetentionMaxPercent, BreakerCandidates: defaultRetentionBreaker}},
			Without:  []string{config.KeyProtectTag, config.KeyMinAge, config.KeyMaxDeleteSizePerRun},
			GraceWhy: "an object must be past its retention on more than one run before it is deleted",
		},
	})
}

func (r *Retention) defaults(set func(string) bool, jobs bool, succeeded, failed config.Duration) {
	config.Fill(set, "succeeded", &r.Succeeded, succeeded)
	config.Fill(set, "failed", &r.Failed, failed)
	config.Fill(set, "namespaces.exclude", &r.Namespaces.Exclude, append([]string(nil), defaultExcludeNS...))
	config.Fill(set, "retentionAnnotation", &r.RetentionAnnotation, defaultRetentionAnnotation)
	config.Fill(set, "deletesPerSecond", &r.DeletesPerSecond, defaultRetentionRate)
	if !jobs {
		return
	}
	if r.KeepCronJobHistory == nil {
		keep := true
		r.KeepCronJobHistory = &keep
	}
	if r.TTLGrace == nil {
		d := defaultTTLGrace
		r.TTLGrace = &d
	}
}

func (r *Retention) validate(report *config.Report, jobs bool) {
	if r.Succeeded <= 0 {
		report.Add("succeeded", "must be more than 0 — how long a succeeded object is kept after it finished")
	}
	if r.Failed <= 0 {
		report.Add("failed", "must be more than 0 — how long a failed object is kept for people to debug it")
	}
	for _, l := range []struct {
		p  string
		gs []string
	}{{"namespaces.include", r.Namespaces.Include}, {"namespaces.exclude", r.Namespaces.Exclude}} {
		config.CheckList(report, l.p, l.gs, func(g string) string {
			if _, err := config.GlobRegexp(g); err != nil || g == "" {
				return fmt.Sprintf("%q is not a namespace glob — write e.g. batch-* or team-a", g)
			}
			return ""
		})
	}
	if r.Selector != "" {
		if _, err := labels.Parse(r.Selector); err != nil {
			report.Add("selector", "%q is not a label selector: %v — write e.g. team=data,tier!=critical", r.Selector, err)
		}
	}
	if r.RetentionAnnotation == "" {
		report.Add("retentionAnnotation", "must not be empty — remove the key for the default %s", defaultRetentionAnnotation)
	} else if errs := content.IsLabelKey(r.RetentionAnnotation); len(errs) > 0 {
		report.Add("retentionAnnotation", "%q is not a valid annotation key — %s", r.RetentionAnnotation, strings.Join(errs, "; "))
	}
	if r.DeletesPerSecond <= 0 || r.DeletesPerSecond > maxPerSecond {
		report.Add("deletesPerSecond", "%g is out of range — use more than 0 and at most %g", r.DeletesPerSecond, maxPerSecond)
	}
	if jobs {
		if r.TTLGrace != nil && *r.TTLGrace < 0 {
			report.Add("ttlGrace", "must not be negative")
		}
		if len(r.OwnerKinds) > 0 {
			report.Add("ownerKinds", "only meaningful in the pods section")
		}
		return
	}
	if r.KeepCronJobHistory != nil {
		report.Add("keepCronJobHistory", "only meaningful in the jobs section")
	}
	if r.TTLGrace != nil {
		report.Add("ttlGrace", "only meaningful in the jobs section")
	}
	config.CheckList(report, "ownerKinds", r.OwnerKinds, func(k string) string {
		switch {
		case k == "Job":
			return "Job is always known — list only other owner kinds, such as TaskRun"
		case k == "ReplicaSet" || k == "StatefulSet" || k == "DaemonSet" || k == "ReplicationController":
			return fmt.Sprintf("%s's controller manages its pods — reclaim never deletes them", k)
		case !ownerKindName.MatchString(k):
			return fmt.Sprintf("%q is not a kind — kinds are CamelCase, such as TaskRun", k)
		}
		return ""
	})
}
