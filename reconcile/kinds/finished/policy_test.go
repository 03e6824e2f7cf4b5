package finished_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func globs(t *testing.T, gs ...string) []*regexp.Regexp {
	t.Helper()
	var out []*regexp.Regexp
	for _, g := range gs {
		re, err := config.GlobRegexp(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, re)
	}
	return out
}

func TestInScope(t *testing.T) {
	sel, err := labels.Parse("app=batch,tier!=critical")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		include, exclude []string
		selector         labels.Selector
		ns               string
		lbls             map[string]string
		want             bool
	}{
		{"no rules: everything", nil, nil, nil, "anything", nil, true},
		{"include glob matches", []string{"team-*"}, nil, nil, "team-a", nil, true},
		{"include glob does not match", []string{"team-*"}, nil, nil, "kube-system", nil, false},
		{"include glob is anchored", []string{"team-*"}, nil, nil, "my-team-a", nil, false},
		{"second include matches", []string{"team-*", "ci"}, nil, nil, "ci", nil, true},
		{"exact include is not a prefix", []string{"ci"}, nil, nil, "ci-2", nil, false},
		{"exclude wins over include", []string{"team-*"}, []string{"team-secret"}, nil, "team-secret", nil, false},
		{"exclude alone", nil, []string{"kube-*"}, nil, "kube-system", nil, false},
		{"exclude alone lets others in", nil, []string{"kube-*"}, nil, "default", nil, true},
		{"selector matches", nil, nil, sel, "default", map[string]string{"app": "batch"}, true},
		{"selector does not match", nil, nil, sel, "default", map[string]string{"app": "web"}, false},
		{"selector excludes by !=", nil, nil, sel, "default", map[string]string{"app": "batch", "tier": "critical"}, false},
		{"selector with no labels", nil, nil, sel, "default", nil, false},
		{"selector and namespace both needed", []string{"team-*"}, nil, sel, "other", map[string]string{"app": "batch"}, false},
		{"excluded namespace beats matching selector", nil, []string{"default"}, sel, "default", map[string]string{"app": "batch"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := finished.Policy{Include: globs(t, tc.include...), Exclude: globs(t, tc.exclude...), Selector: tc.selector}
			if got := p.InScope(tc.ns, tc.lbls); got != tc.want {
				t.Fatalf("InScope(%q, %v) = %v, want %v", tc.ns, tc.lbls, got, tc.want)
			}
		})
	}
}

func TestRetain(t *testing.T) {
	p := finished.Policy{Succeeded: 24 * time.Hour, Failed: 72 * time.Hour, Annotation: "reclaim.dev/retention"}
	fin := t0
	cases := []struct {
		name       string
		succeeded  bool
		annotation string
		now        time.Time
		keep       string // "" : past retention
		until      time.Time
		reason     string // a part of the reason
	}{
		{"succeeded just inside", true, "", fin.Add(24*time.Hour - time.Nanosecond), finished.ClassRetained, fin.Add(24 * time.Hour), "succeeded retention"},
		{"succeeded exactly at the boundary is past", true, "", fin.Add(24 * time.Hour), "", fin.Add(24 * time.Hour), "past its succeeded retention"},
		{"failed at the succeeded boundary is retained", false, "", fin.Add(24 * time.Hour), finished.ClassRetained, fin.Add(72 * time.Hour), "failed retention"},
		{"failed just inside", false, "", fin.Add(72*time.Hour - time.Nanosecond), finished.ClassRetained, fin.Add(72 * time.Hour), "failed retention"},
		{"failed exactly at the boundary is past", false, "", fin.Add(72 * time.Hour), "", fin.Add(72 * time.Hour), "past its failed retention"},
		{"annotation longer keeps a succeeded one", true, "7d", fin.Add(48 * time.Hour), finished.ClassRetained, fin.Add(7 * 24 * time.Hour), "annotation reclaim.dev/retention"},
		{"annotation longer ends", true, "7d", fin.Add(7 * 24 * time.Hour), "", fin.Add(7 * 24 * time.Hour), "annotation reclaim.dev/retention"},
		{"annotation shorter lets a failed one go", false, "2h", fin.Add(2 * time.Hour), "", fin.Add(2 * time.Hour), "annotation reclaim.dev/retention"},
		{"annotation shorter, not yet", false, "2h", fin.Add(time.Hour), finished.ClassRetained, fin.Add(2 * time.Hour), ""},
		{"annotation with days and hours", true, "1d12h", fin.Add(36*time.Hour - time.Second), finished.ClassRetained, fin.Add(36 * time.Hour), ""},
		{"annotation with spaces", true, " 2h ", fin.Add(2 * time.Hour), "", fin.Add(2 * time.Hour), ""},
		{"never", true, "never", fin.Add(1000 * 24 * time.Hour), finished.ClassNever, time.Time{}, "never"},
		{"never on a failed one", false, "never", fin.Add(1000 * 24 * time.Hour), finished.ClassNever, time.Time{}, ""},
		{"malformed words", true, "3 days", fin.Add(1000 * 24 * time.Hour), finished.ClassBadRetain, time.Time{}, `"3 days"`},
		{"malformed negative", true, "-1h", fin.Add(1000 * 24 * time.Hour), finished.ClassBadRetain, time.Time{}, ""},
		{"malformed Never", false, "Never", fin.Add(1000 * 24 * time.Hour), finished.ClassBadRetain, time.Time{}, ""},
		{"malformed unit", false, "5w", fin.Add(1000 * 24 * time.Hour), finished.ClassBadRetain, time.Time{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := p.Retain(tc.succeeded, fin, tc.annotation, tc.now)
			if v.Keep != tc.keep || !v.Until.Equal(tc.until) {
				t.Fatalf("Retain = %+v, want keep %q until %s", v, tc.keep, tc.until)
			}
			if !strings.Contains(v.Reason, tc.reason) || v.Reason == "" {
				t.Fatalf("reason %q lacks %q", v.Reason, tc.reason)
			}
		})
	}
}

func TestPolicyFrom(t *testing.T) {
	yes := true
	r := &finished.Retention{Succeeded: config.Duration(time.Hour), Failed: config.Duration(48 * time.Hour),
		Namespaces: finished.Namespaces{Include: []string{"team-*"}, Exclude: []string{"team-x"}}, Selector: "app=batch",
		RetentionAnnotation: "reclaim.dev/retention", DeletesPerSecond: 3, KeepCronJobHistory: &yes,
		Safety: config.Safety{Grace: config.Duration(2 * time.Hour), Caps: config.Caps{MaxDeletesPerRun: 7, BreakerCandidates: 9}}}
	p := finished.PolicyFrom(r, "reclaim-protect")
	if p.Succeeded != time.Hour || p.Failed != 48*time.Hour || p.Grace.Std() != 2*time.Hour || p.MaxDeletesPerRun != 7 ||
		p.BreakerCandidates != 9 || p.DeletesPerSecond != 3 || p.ProtectLabel != "reclaim-protect" || p.Annotation != "reclaim.dev/retention" {
		t.Fatalf("%+v", p)
	}
	if !p.InScope("team-a", map[string]string{"app": "batch"}) || p.InScope("team-x", map[string]string{"app": "batch"}) ||
		p.InScope("team-a", nil) || p.InScope("other", map[string]string{"app": "batch"}) {
		t.Fatal("scope not carried over")
	}
}
