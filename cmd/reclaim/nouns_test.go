//go:build demo

package main

import (
	"testing"

	config "reclaim.dev/reclaim/configs"
)

// The reports group and label rows by each kind's noun: two kinds of one
// noun ("snapshots" on both clouds) would merge their rows in the email.
// The demo turns every kind on.
func TestKindNounsAreDistinct(t *testing.T) {
	cfg, err := config.Parse(config.Demo, "configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nouns, _ := kindWords(cfg)
	seen := map[string]string{}
	for kind, noun := range nouns {
		if other, ok := seen[noun]; ok {
			t.Errorf("%s and %s both say %q", kind, other, noun)
		}
		seen[noun] = kind
	}
}
