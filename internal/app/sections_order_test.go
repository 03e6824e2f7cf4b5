package app_test

import (
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
	_ "reclaim.dev/reclaim/internal/app"
)

// The kinds' sections register in the order they always have: config
// check --print shows them, and reports their problems, in that order.
// k8sPvcs, newer, comes last.
func TestSectionsKeepTheirOrder(t *testing.T) {
	var keys []string
	for _, s := range config.Sections() {
		if !strings.HasPrefix(s.Key, "example") { // the tests' example kinds
			keys = append(keys, s.Key)
		}
	}
	const want = "ebs ebsSnapshots ecr ec2Interfaces gce disks gceSnapshots jobs pods k8sPvcs"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("sections register as %s, want %s", got, want)
	}
}
