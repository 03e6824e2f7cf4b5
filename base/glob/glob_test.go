package glob

import "testing"

func TestCompile(t *testing.T) {
	for _, c := range []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"**", []string{"a", "a/b/c", ""}, nil},
		{"team-*", []string{"team-a", "team-"}, []string{"team-a/app", "xteam-a"}},
		{"team-a/**", []string{"team-a", "team-a/app", "team-a/x/y"}, []string{"team-ab", "team-b/app"}},
		{"**/charts/**", []string{"charts", "charts/x.yaml", "apps/charts/x.yaml", "a/b/charts"}, []string{"apps/mycharts/x.yaml"}},
		{"ci/**/cache", []string{"ci/x/cache", "ci/x/y/cache"}, []string{"ci/cache2"}},
		{"v?.*", []string{"v1.2", "v2.x"}, []string{"v10.1", "v1"}},
		{"latest", []string{"latest"}, []string{"latest2", "a/latest"}},
		{"a.b", []string{"a.b"}, []string{"axb"}},
	} {
		re, err := Compile(c.glob)
		if err != nil {
			t.Fatalf("%q: %v", c.glob, err)
		}
		for _, s := range c.yes {
			if !re.MatchString(s) {
				t.Errorf("%q does not match %q (%s)", c.glob, s, re)
			}
		}
		for _, s := range c.no {
			if re.MatchString(s) {
				t.Errorf("%q matches %q (%s)", c.glob, s, re)
			}
		}
	}
	for _, bad := range []string{"", "team-[ab]", "{a,b}"} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}
