package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// eksBase is a valid file the cases below add one section to.
const eksBase = "clusters:\n  - name: a\n"

// problemsIn parses yaml and returns its problems; none if it loads.
func problemsIn(t *testing.T, yaml string) []Problem {
	t.Helper()
	_, err := Parse([]byte(yaml), "eks.yaml")
	if err == nil {
		return nil
	}
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("error is %T, want *Error: %v", err, err)
	}
	return cerr.Problems
}

func TestEKSProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string // after eksBase
		path string // the field the problem must name
		fix  string // what the message must say
	}{
		{"clusters awsSubnets alone", "clusters:\n  - {name: a, awsSubnets: [subnet-12345678]}\n", "clusters[0].awsSubnets", "only meaningful with an ec2 section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := tc.yaml
			if !strings.Contains(yaml, "clusters:") {
				yaml = eksBase + yaml
			}
			ps := problemsIn(t, yaml)
			if len(ps) == 0 {
				t.Fatalf("loaded without error:\n%s", yaml)
			}
			for _, p := range ps {
				if p.Path == tc.path && strings.Contains(p.Message, tc.fix) {
					if len(ps) != 1 {
						t.Errorf("want no other problems, got: %v", ps)
					}
					return
				}
			}
			t.Errorf("no problem at %s saying %q; got:\n%v", tc.path, tc.fix, ps)
		})
	}
}

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		in    string
		d     time.Duration
		never bool
		ok    bool
	}{
		{"2h", 2 * time.Hour, false, true},
		{"7d", 7 * 24 * time.Hour, false, true},
		{"90m", 90 * time.Minute, false, true},
		{"1d12h", 36 * time.Hour, false, true},
		{" 36h ", 36 * time.Hour, false, true},
		{"never", 0, true, true},
		{"abc", 0, false, false},
		{"-1h", 0, false, false},
		{"", 0, false, false},
		{"7", 0, false, false},
		{"Never", 0, false, false},
	} {
		d, never, ok := ParseRetention(tc.in)
		if d != tc.d || never != tc.never || ok != tc.ok {
			t.Errorf("ParseRetention(%q) = %s, %t, %t; want %s, %t, %t", tc.in, d, never, ok, tc.d, tc.never, tc.ok)
		}
	}
}
