package config

import (
	"fmt"
	"slices"
	"strings"
)

// Safety is what a kind's section says about when its resources may be
// deleted: the settings of the engine's rules, the same for every kind. A
// section embeds it without a name, so its keys stand in the section (or in
// the part of it SafetyRules.At names) where the file writes them, and
// registers SafetyRules with it (SectionSpec.Safety): the registry fills
// the kind's defaults and checks the one set of floors, so a kind cannot
// leave one out.
type Safety struct {
	// ProtectTag is a tag key: a resource tagged with it, any value, is
	// never deleted.
	ProtectTag string `json:"protectTag"`
	// Grace is how long a resource must have been a candidate, seen on more
	// than one run, before it is deleted.
	Grace Duration `json:"grace"`
	// MinAge: a resource made less than this long ago is never deleted.
	MinAge Duration `json:"minAge"`
	// Caps bound what one run deletes, and trip the breaker.
	Caps
}

// The keys of Safety, for SafetyRules.Without.
const (
	KeyProtectTag          = "protectTag"
	KeyMinAge              = "minAge"
	KeyMaxDeleteSizePerRun = "maxDeleteSizePerRun"
)

// SafetyRules are how one kind's section has its Safety.
type SafetyRules struct {
	// At is the path inside the section of the part that embeds Safety:
	// "" for the section itself ("interfaces" for ec2Interfaces.interfaces).
	At string
	// Defaults are the kind's values for the keys the file leaves out.
	Defaults Safety
	// Without lists the keys the kind has no use for (KeyMinAge: its
	// resources carry no creation time). The file may not set them, and
	// the reference does not show them.
	Without []string
	// GraceWhy and MinAgeWhy finish the floors' messages: why, for this
	// kind's resources, each must be more than 0.
	GraceWhy, MinAgeWhy string
	// TagKey says what is wrong with a protect tag key, "" when nothing
	// (AWSTagKeyProblem); nil accepts any key, "" included.
	TagKey func(key string) string
	// GraceFrom, if set, is the grace of a file that leaves the kind's out,
	// instead of Defaults.Grace: another section's (k8sPvcs waits as long
	// as the disks), read once every section has its defaults.
	GraceFrom func(c *Config) Duration
}

func (r *SafetyRules) has(key string) bool { return !slices.Contains(r.Without, key) }

// fill sets what the file left out to the kind's defaults; set says
// whether the file set a key, by its path inside At.
func (s *Safety) fill(set func(string) bool, r *SafetyRules) {
	d := r.Defaults
	if r.has(KeyProtectTag) {
		Fill(set, KeyProtectTag, &s.ProtectTag, d.ProtectTag)
	}
	Fill(set, "grace", &s.Grace, d.Grace)
	if r.has(KeyMinAge) {
		Fill(set, KeyMinAge, &s.MinAge, d.MinAge)
	}
	Fill(set, "maxDeletesPerRun", &s.MaxDeletesPerRun, d.MaxDeletesPerRun)
	Fill(set, "maxDeletePercent", &s.MaxDeletePercent, d.MaxDeletePercent)
	if r.has(KeyMaxDeleteSizePerRun) {
		Fill(set, KeyMaxDeleteSizePerRun, &s.MaxDeleteSizePerRun, d.MaxDeleteSizePerRun)
	}
	Fill(set, "breakerCandidates", &s.BreakerCandidates, d.BreakerCandidates)
}

// check reports what is below a floor: the one check of every kind's
// safety settings. A grace taken from another section (GraceFrom) is
// that section's to check.
func (s *Safety) check(report *Report, r *SafetyRules, graceFrom bool) {
	at := func(key string) string { return join(r.At, key) }
	if r.has(KeyProtectTag) && r.TagKey != nil {
		if msg := r.TagKey(s.ProtectTag); msg != "" {
			report.Add(at(KeyProtectTag), "%s", msg)
		}
	}
	if s.Grace <= 0 && !graceFrom {
		report.Add(at("grace"), "must be more than 0 — %s", r.GraceWhy)
	}
	if r.has(KeyMinAge) && s.MinAge <= 0 {
		report.Add(at(KeyMinAge), "must be more than 0 — %s", r.MinAgeWhy)
	}
	s.Caps.check(report, r.At)
}

// check reports caps below their floors at path.
func (c *Caps) check(report *Report, path string) {
	if c.MaxDeletesPerRun < 0 {
		report.Add(join(path, "maxDeletesPerRun"), "%d is negative — use 0 to delete nothing", c.MaxDeletesPerRun)
	}
	// maxDeletePercent and maxDeleteSizePerRun are held to their ranges
	// where they are read (Percent, Size).
	if c.BreakerCandidates < 1 {
		report.Add(join(path, "breakerCandidates"), "must be at least 1 — to delete nothing set maxDeletesPerRun: 0")
	}
}

// CheckCaps checks caps a section keeps apart from a Safety (k8sPvcs has
// caps and no Safety of its own) at path, with the same floors.
func CheckCaps(report *Report, path string, c Caps) { c.check(report, path) }

// AWSTagKeyProblem says what is wrong with an EC2 or ECR tag key, "" when
// nothing.
func AWSTagKeyProblem(key string) string {
	if strings.TrimSpace(key) == "" || len(key) > 128 || strings.HasPrefix(strings.ToLower(key), "aws:") {
		return fmt.Sprintf("%q is not a usable EC2 tag key — 1 to 128 characters, not starting with aws: (remove the key for the default)", key)
	}
	return ""
}
