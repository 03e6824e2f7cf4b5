package optout_test

import (
	"testing"

	"reclaim.dev/reclaim/base/optout"
)

// The key protects whatever its value; no key, or no opt-out configured,
// protects nothing.
func TestProtects(t *testing.T) {
	for _, c := range []struct {
		key    string
		labels map[string]string
		want   bool
	}{
		{"p", map[string]string{"p": "true"}, true},
		{"p", map[string]string{"p": "TRUE"}, true},
		{"p", map[string]string{"p": "false"}, true},
		{"p", map[string]string{"p": ""}, true},
		{"p", map[string]string{"P": "true"}, false}, // keys are case-sensitive, as in Kubernetes and AWS
		{"p", map[string]string{"other": "true"}, false},
		{"p", nil, false},
		{"", map[string]string{"": "true"}, false},
	} {
		if _, got := optout.Protects(c.key, c.labels); got != c.want {
			t.Errorf("Protects(%q, %v) = %v, want %v", c.key, c.labels, got, c.want)
		}
	}
}
