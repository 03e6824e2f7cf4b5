package app

import (
	"slices"
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
)

// listingOnly are the sections that turn on a read, not a policy: they
// delete nothing, so they have no Safety.
var listingOnly = []string{"gce"}

// Every kind's section has the one safety block, and the one validator
// refuses a grace or minAge of 0 and caps out of range in each of them: a
// table over the registered sections, so a new kind is covered without
// an edit here.
func TestEveryKindRefusesUnsafeSettings(t *testing.T) {
	seen := 0
	for _, s := range config.Sections() {
		r := s.Safety
		if r == nil {
			if !slices.Contains(listingOnly, s.Key) {
				t.Errorf("section %s (%s) registers no Safety: its grace, caps and floors would be its own", s.Key, s.Doc)
			}
			continue
		}
		seen++
		at := s.Key
		if r.At != "" {
			at += "." + r.At
		}
		has := func(k string) bool { return !slices.Contains(r.Without, k) }
		type tc struct{ key, value, says string }
		cases := []tc{
			{"grace", "0s", "must be more than 0 — "},
			{"maxDeletesPerRun", "-1", "-1 is negative — use 0 to delete nothing"},
			{"maxDeletePercent", "150%", "more than 100%"},
			{"maxDeletePercent", "-5%", "is negative"},
			{"breakerCandidates", "0", "must be at least 1"},
		}
		if has(config.KeyMinAge) {
			cases = append(cases, tc{config.KeyMinAge, "0s", "must be more than 0 — "})
		} else {
			// A kind without a minimum age does not take one silently.
			cases = append(cases, tc{config.KeyMinAge, "1h", "unknown field"})
		}
		if has(config.KeyProtectTag) && r.TagKey != nil {
			cases = append(cases, tc{config.KeyProtectTag, `"aws:keep"`, `"aws:keep" is not a`}) // a usable EC2 tag, a valid GCE label
		}
		if !has(config.KeyMaxDeleteSizePerRun) {
			cases = append(cases, tc{config.KeyMaxDeleteSizePerRun, "1Gi", "unknown field"})
		}
		for _, c := range cases {
			path := at + "." + c.key
			t.Run(path+"="+c.value, func(t *testing.T) {
				ps := configtest.Problems(t, configtest.Base+nested(at, c.key+": "+c.value))
				for _, p := range ps {
					if p.Path == path && strings.Contains(p.Message, c.says) {
						return
					}
				}
				t.Errorf("no problem at %s saying %q; got:\n%v", path, c.says, ps)
			})
		}
		// What the floors allow loads as written: 0 deletes nothing.
		t.Run(at+" at its floors", func(t *testing.T) {
			for _, p := range configtest.Problems(t, configtest.Base+nested(at, "maxDeletesPerRun: 0", "maxDeletePercent: 100%", "breakerCandidates: 1")) {
				if strings.HasPrefix(p.Path, at+".") && slices.Contains([]string{"grace", "minAge", "maxDeletesPerRun", "maxDeletePercent", "breakerCandidates"}, strings.TrimPrefix(p.Path, at+".")) {
					t.Errorf("a setting at its floor refused: %v", p)
				}
			}
		})
	}
	if seen < 6 {
		t.Errorf("%d sections have a Safety, want every kind's (gce-disk's disks, ecr, ec2, ebs, jobs, pods)", seen)
	}
}

// nested writes lines ("key: value") as YAML at path, one mapping a part
// of the path.
func nested(path string, lines ...string) string {
	parts := strings.Split(path, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":\n")
	}
	for _, l := range lines {
		b.WriteString(strings.Repeat("  ", len(parts)) + l + "\n")
	}
	return b.String()
}
