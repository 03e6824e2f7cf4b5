// Package configtest checks what config.Parse says of a bad file: the
// problem at one field, and no other. The global sections' tests and each
// kind's section tests share it.
package configtest

import (
	"errors"
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
)

// Base is a valid file a case adds its section to.
const Base = "clusters:\n  - name: a\n"

// Case is one bad file: its name, its YAML (after Base, unless it has its
// own clusters), the field the problem must name, and what it must say.
// (An array, so that a table of them stays one line a case.)
type Case [4]string

// Run checks each case: the file does not load, and the problem at path
// says fix, with no other problem than more[name] (a mistake that also
// leaves a required field unset, say).
func Run(t *testing.T, cases []Case, more map[string]int) {
	t.Helper()
	for _, tc := range cases {
		name, path, fix := tc[0], tc[2], tc[3]
		t.Run(name, func(t *testing.T) {
			yaml := tc[1]
			if !strings.Contains(yaml, "clusters:") {
				yaml = Base + yaml
			}
			ps := Problems(t, yaml)
			if len(ps) == 0 {
				t.Fatalf("loaded without error:\n%s", yaml)
			}
			for _, p := range ps {
				if p.Path == path && strings.Contains(p.Message, fix) {
					if len(ps) != 1+more[name] {
						t.Errorf("want %d other problems, got: %v", more[name], ps)
					}
					return
				}
			}
			t.Errorf("no problem at %s saying %q; got:\n%v", path, fix, ps)
		})
	}
}

// Problems parses yaml and returns its problems; none if it loads.
func Problems(t *testing.T, yaml string) []config.Problem {
	t.Helper()
	_, err := config.Parse([]byte(yaml), "reclaim.yaml")
	if err == nil {
		return nil
	}
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("error is %T, want *config.Error: %v", err, err)
	}
	return cerr.Problems
}
