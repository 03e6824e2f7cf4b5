package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/labels"
)

// Tags are AWS tags, key to value. The decoder handles no maps, so Tags
// decodes and prints itself.
type Tags map[string]string

// UnmarshalJSON accepts a mapping of tag keys to string values.
func (t *Tags) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("expected a mapping of tag keys to values, such as {kubernetes.io/role/internal-elb: \"1\"}")
	}
	m := make(Tags, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("tag %q: expected a string, got %s — quote it: %q", k, v, strings.Trim(string(v), `"`))
		}
		m[k] = s
	}
	*t = m
	return nil
}

// MarshalJSON prints the tags as a mapping.
func (t Tags) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]string(t)) }

// Retention is the policy of the jobs and pods sections: finished objects
// kept for a while, then deleted.
type Retention struct {
	// Succeeded and Failed are how long after finishing an object is kept
	// (failed ones longer: people debug them).
	Succeeded Duration `json:"succeeded"`
	Failed    Duration `json:"failed"`
	// Namespaces limit where reclaim looks (globs); exclude wins.
	Namespaces Namespaces `json:"namespaces"`
	// Selector is a label selector objects must match ("" matches all).
	Selector string `json:"selector"`
	// RetentionAnnotation on an object overrides its retention ("2h",
	// "7d", or "never").
	RetentionAnnotation string `json:"retentionAnnotation"`
	// Grace is how long an object must have been past its retention, seen
	// on more than one run, before it is deleted.
	Grace             Duration `json:"grace"`
	MaxDeletesPerRun  int      `json:"maxDeletesPerRun"`
	MaxDeletePercent  Percent  `json:"maxDeletePercent"`
	BreakerCandidates int      `json:"breakerCandidates"`
	// DeletesPerSecond paces deletes per cluster so the API server is never starved.
	DeletesPerSecond float64 `json:"deletesPerSecond"`

	// Jobs only. KeepCronJobHistory keeps the newest successfulJobsHistoryLimit
	// and failedJobsHistoryLimit Jobs of each CronJob whatever their age.
	KeepCronJobHistory *bool `json:"keepCronJobHistory,omitempty"`
	// TTLGrace: a Job with ttlSecondsAfterFinished is the TTL controller's;
	// reclaim deletes it only when it is this far past due.
	TTLGrace *Duration `json:"ttlGrace,omitempty"`

	// Pods only. OwnerKinds are owner kinds besides Job whose finished pods
	// no controller acts on (e.g. TaskRun): such pods may be deleted.
	OwnerKinds []string `json:"ownerKinds,omitempty"`
}

// Namespaces are include and exclude globs.
type Namespaces struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// Defaults of the jobs and pods sections.
const (
	defaultJobsSucceeded       = Duration(24 * time.Hour)
	defaultJobsFailed          = Duration(7 * 24 * time.Hour)
	defaultPodsSucceeded       = Duration(time.Hour)
	defaultPodsFailed          = Duration(7 * 24 * time.Hour)
	defaultRetentionAnnotation = "reclaim.dev/retention"
	defaultRetentionGrace      = Duration(time.Hour)
	defaultRetentionMaxDeletes = 10000 // see reference.yaml: half the history at most, a 100,000 backlog in about ten runs
	defaultRetentionMaxPercent = Percent(0.5)
	defaultRetentionBreaker    = 200000
	defaultRetentionRate       = 20.0
	defaultTTLGrace            = Duration(time.Hour)
)

var (
	defaultExcludeNS     = []string{"kube-system"}
	subnetID             = regexp.MustCompile(`^subnet-[0-9a-f]{8}([0-9a-f]{9})?$`)
	ownerKindName        = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	maxRetentionPerSecnd = 1000.0
)

func (c *Config) eksDefaults() {
	if j := c.Jobs; j != nil {
		c.retentionDefaults("jobs", j, defaultJobsSucceeded, defaultJobsFailed)
		keep := true
		if j.KeepCronJobHistory == nil {
			j.KeepCronJobHistory = &keep
		}
		if j.TTLGrace == nil {
			d := defaultTTLGrace
			j.TTLGrace = &d
		}
	}
	if p := c.Pods; p != nil {
		c.retentionDefaults("pods", p, defaultPodsSucceeded, defaultPodsFailed)
	}
}

func (c *Config) retentionDefaults(path string, r *Retention, succeeded, failed Duration) {
	def(c, path+".succeeded", &r.Succeeded, succeeded)
	def(c, path+".failed", &r.Failed, failed)
	def(c, path+".namespaces.exclude", &r.Namespaces.Exclude, append([]string(nil), defaultExcludeNS...))
	def(c, path+".retentionAnnotation", &r.RetentionAnnotation, defaultRetentionAnnotation)
	def(c, path+".grace", &r.Grace, defaultRetentionGrace)
	def(c, path+".maxDeletesPerRun", &r.MaxDeletesPerRun, defaultRetentionMaxDeletes)
	def(c, path+".maxDeletePercent", &r.MaxDeletePercent, defaultRetentionMaxPercent)
	def(c, path+".breakerCandidates", &r.BreakerCandidates, defaultRetentionBreaker)
	def(c, path+".deletesPerSecond", &r.DeletesPerSecond, defaultRetentionRate)
}

func checkSubnet(s string) string {
	if !subnetID.MatchString(s) {
		return fmt.Sprintf("%q is not a subnet id — they look like subnet-0123456789abcdef0", s)
	}
	return ""
}

func (r *Retention) validate(ps *problems, path string, jobs bool) {
	if r.Succeeded <= 0 {
		ps.add(path+".succeeded", "must be more than 0 — how long a succeeded object is kept after it finished")
	}
	if r.Failed <= 0 {
		ps.add(path+".failed", "must be more than 0 — how long a failed object is kept for people to debug it")
	}
	for _, l := range []struct {
		p  string
		gs []string
	}{{path + ".namespaces.include", r.Namespaces.Include}, {path + ".namespaces.exclude", r.Namespaces.Exclude}} {
		validateList(ps, l.p, l.gs, func(g string) string {
			if _, err := GlobRegexp(g); err != nil || g == "" {
				return fmt.Sprintf("%q is not a namespace glob — write e.g. batch-* or team-a", g)
			}
			return ""
		})
	}
	if r.Selector != "" {
		if _, err := labels.Parse(r.Selector); err != nil {
			ps.add(path+".selector", "%q is not a label selector: %v — write e.g. team=data,tier!=critical", r.Selector, err)
		}
	}
	if r.RetentionAnnotation == "" {
		ps.add(path+".retentionAnnotation", "must not be empty — remove the key for the default %s", defaultRetentionAnnotation)
	} else if errs := content.IsLabelKey(r.RetentionAnnotation); len(errs) > 0 {
		ps.add(path+".retentionAnnotation", "%q is not a valid annotation key — %s", r.RetentionAnnotation, strings.Join(errs, "; "))
	}
	if r.Grace <= 0 {
		ps.add(path+".grace", "must be more than 0 — an object must be past its retention on more than one run before it is deleted")
	}
	if r.MaxDeletesPerRun < 0 {
		ps.add(path+".maxDeletesPerRun", "%d is negative — use 0 to delete nothing", r.MaxDeletesPerRun)
	}
	if r.MaxDeletePercent < 0 || r.MaxDeletePercent > 1 {
		ps.add(path+".maxDeletePercent", "%s is out of range — use 0%% to 100%%", r.MaxDeletePercent)
	}
	if r.BreakerCandidates < 1 {
		ps.add(path+".breakerCandidates", "must be at least 1 — to delete nothing set maxDeletesPerRun: 0")
	}
	if r.DeletesPerSecond <= 0 || r.DeletesPerSecond > maxRetentionPerSecnd {
		ps.add(path+".deletesPerSecond", "%g is out of range — use more than 0 and at most %g", r.DeletesPerSecond, maxRetentionPerSecnd)
	}
	if jobs {
		if r.TTLGrace != nil && *r.TTLGrace < 0 {
			ps.add(path+".ttlGrace", "must not be negative")
		}
		if len(r.OwnerKinds) > 0 {
			ps.add(path+".ownerKinds", "only meaningful in the pods section")
		}
		return
	}
	if r.KeepCronJobHistory != nil {
		ps.add(path+".keepCronJobHistory", "only meaningful in the jobs section")
	}
	if r.TTLGrace != nil {
		ps.add(path+".ttlGrace", "only meaningful in the jobs section")
	}
	validateList(ps, path+".ownerKinds", r.OwnerKinds, func(k string) string {
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

// ParseRetention reads a retention annotation's value: a duration such as
// 90m, 36h or 7d, or "never". ok is false for anything else.
func ParseRetention(s string) (d time.Duration, never bool, ok bool) {
	s = strings.TrimSpace(s)
	if s == "never" {
		return 0, true, true
	}
	v, err := ParseDuration(s)
	if err != nil {
		return 0, false, false
	}
	return v.Std(), false, true
}

// crossValidateEC2 checks the clusters' awsSubnets, and that the jobs and
// pods sections read one retention annotation.
func (c *Config) crossValidateEC2(ps *problems) {
	if c.Jobs != nil && c.Pods != nil && c.Jobs.RetentionAnnotation != c.Pods.RetentionAnnotation {
		ps.add("pods.retentionAnnotation", "%q differs from jobs.retentionAnnotation %q — use one annotation for both", c.Pods.RetentionAnnotation, c.Jobs.RetentionAnnotation)
	}
	// Checked with or without an ec2 section: a bad id is never accepted silently.
	for i, cl := range c.Clusters {
		validateList(ps, index("clusters", i)+".awsSubnets", cl.AWSSubnets, checkSubnet)
	}
	if !c.Has("ec2") { // the ec2-interface kind's section
		for i, cl := range c.Clusters {
			if len(cl.AWSSubnets) > 0 && c.Jobs == nil && c.Pods == nil {
				ps.add(index("clusters", i)+".awsSubnets", "only meaningful with an ec2 section")
			}
		}
	}
}
