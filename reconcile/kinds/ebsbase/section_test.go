package ebsbase

import (
	"reflect"
	"testing"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
)

const regions = "ebs:\n  regions: [{account: \"123456789012\", region: us-east-1}]\n"

// The caps stand in the section, as every kind's do; the nested caps:
// earlier versions wrote is still read as the same keys.
func TestCapsFlatOrNestedAsBefore(t *testing.T) {
	for _, form := range []string{
		"  maxDeletesPerRun: 3\n  maxDeletePercent: 50%\n",
		"  caps: {maxDeletesPerRun: 3, maxDeletePercent: 50%}\n",
		"  caps:\n    maxDeletesPerRun: 3\n  maxDeletePercent: 50%\n",
	} {
		cfg, err := config.Parse([]byte(configtest.Base+regions+form), "reclaim.yaml")
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		s := SectionOf(cfg)
		if s.MaxDeletesPerRun != 3 || s.MaxDeletePercent != 0.5 || s.BreakerCandidates != defaultBreaker {
			t.Errorf("%s: caps %+v, want 3, 50%% and the default breaker", form, s.Caps)
		}
	}
	configtest.Run(t, []configtest.Case{
		{"set twice", regions + "  maxDeletesPerRun: 4\n  caps: {maxDeletesPerRun: 3}\n", "ebs.caps.maxDeletesPerRun", "is set twice, here and as ebs.maxDeletesPerRun"},
		{"nested breaker 0", regions + "  caps: {breakerCandidates: 0}\n", "ebs.caps.breakerCandidates", "must be at least 1"},
		{"nested not a number", regions + "  caps: {maxDeletesPerRun: many}\n", "ebs.caps.maxDeletesPerRun", "expected a whole number"},
		{"nested unknown", regions + "  caps: {maxDeletes: 3}\n", "ebs.caps.maxDeletes", "unknown field"},
		{"nested not a mapping", regions + "  caps: 3\n", "ebs.caps", "expected a mapping"},
	}, nil)
}

// The AWS rates share their floors with ec2's (config.AWSRates), with
// EBS's own limits in the messages.
func TestRates(t *testing.T) {
	configtest.Run(t, []configtest.Case{
		{"requestsPerSecond", regions + "  requestsPerSecond: 21\n", "ebs.requestsPerSecond", "21 is out of range — use more than 0 and at most 20 (EC2's refill rate, shared with the account's other callers)"},
		{"burst", regions + "  burst: 0\n", "ebs.burst", "0 is out of range — use 1 to 100"},
		{"deletesPerSecond", regions + "  deletesPerSecond: 6\n", "ebs.deletesPerSecond", "6 is out of range — use more than 0 and at most 5"},
		{"deleteBurst", regions + "  deleteBurst: 101\n", "ebs.deleteBurst", "101 is out of range — use 1 to 100"},
		{"maxAttempts", regions + "  maxAttempts: 0\n", "ebs.maxAttempts", "0 is out of range — use 1 to 50"},
		{"pageSize", regions + "  pageSize: 501\n", "ebs.pageSize", "501 is out of range — use 5 to 500 (DescribeVolumes' MaxResults)"},
	}, nil)
}

// The section's reference (its part of docs/configuration.md) shows every
// default: parsed, it is a minimal section but for its example region.
func TestReferenceShowsTheDefaults(t *testing.T) {
	parse := func(y string) *Section {
		t.Helper()
		cfg, err := config.Parse([]byte("clusters: [{name: a, context: a}]\n"+y), "reclaim.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return SectionOf(cfg)
	}
	ref := parse(reference)
	minimal := parse("ebs: {regions: [{account: \"123456789012\", region: us-east-1}]}\n")
	r := *ref
	r.Regions = minimal.Regions
	if !reflect.DeepEqual(&r, minimal) {
		t.Errorf("reference.yaml does not show the defaults:\nreference: %+v\ndefaults:  %+v", r, *minimal)
	}
}
