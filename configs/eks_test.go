package config

import (
	"errors"
	"reflect"
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
		{"jobs selector", "jobs: {selector: \"team in (a\"}\n", "jobs.selector", "is not a label selector"},
		{"jobs selector fix", "jobs: {selector: \"team in (a\"}\n", "jobs.selector", "write e.g. team=data,tier!=critical"},
		{"jobs retentionAnnotation", "jobs: {retentionAnnotation: \"reclaim.dev/keep/for\"}\n", "jobs.retentionAnnotation", `"reclaim.dev/keep/for" is not a valid annotation key`},
		{"jobs retentionAnnotation empty", "jobs: {retentionAnnotation: \"\"}\n", "jobs.retentionAnnotation", "must not be empty — remove the key for the default reclaim.dev/retention"},
		{"jobs ownerKinds", "jobs: {ownerKinds: [TaskRun]}\n", "jobs.ownerKinds", "only meaningful in the pods section"},
		{"jobs grace 0", "jobs: {grace: 0s}\n", "jobs.grace", "must be more than 0 — an object must be past its retention on more than one run"},
		{"jobs succeeded 0", "jobs: {succeeded: 0s}\n", "jobs.succeeded", "must be more than 0"},
		{"jobs failed", "jobs: {failed: 7}\n", "jobs.failed", "7 has no unit"},
		{"jobs ttlGrace", "jobs: {ttlGrace: -1h}\n", "jobs.ttlGrace", "is negative"},
		{"jobs namespace glob", "jobs: {namespaces: {include: [\"\"]}}\n", "jobs.namespaces.include[0]", `"" is not a namespace glob — write e.g. batch-* or team-a`},
		{"jobs maxDeletePercent", "jobs: {maxDeletePercent: 150%}\n", "jobs.maxDeletePercent", `"150%" is more than 100%`},
		{"jobs deletesPerSecond", "jobs: {deletesPerSecond: 1001}\n", "jobs.deletesPerSecond", "1001 is out of range — use more than 0 and at most 1000"},
		{"jobs breakerCandidates", "jobs: {breakerCandidates: 0}\n", "jobs.breakerCandidates", "must be at least 1"},
		{"pods ownerKinds ReplicaSet", "pods: {ownerKinds: [ReplicaSet]}\n", "pods.ownerKinds[0]", "ReplicaSet's controller manages its pods — reclaim never deletes them"},
		{"pods ownerKinds StatefulSet", "pods: {ownerKinds: [TaskRun, StatefulSet]}\n", "pods.ownerKinds[1]", "StatefulSet's controller manages its pods"},
		{"pods ownerKinds Job", "pods: {ownerKinds: [Job]}\n", "pods.ownerKinds[0]", "Job is always known — list only other owner kinds, such as TaskRun"},
		{"pods ownerKinds lowercase", "pods: {ownerKinds: [taskrun]}\n", "pods.ownerKinds[0]", `"taskrun" is not a kind — kinds are CamelCase, such as TaskRun`},
		{"pods keepCronJobHistory", "pods: {keepCronJobHistory: true}\n", "pods.keepCronJobHistory", "only meaningful in the jobs section"},
		{"pods keepCronJobHistory false", "pods: {keepCronJobHistory: false}\n", "pods.keepCronJobHistory", "only meaningful in the jobs section"},
		{"pods ttlGrace", "pods: {ttlGrace: 2h}\n", "pods.ttlGrace", "only meaningful in the jobs section"},
		{"pods selector", "pods: {selector: \"!!\"}\n", "pods.selector", "is not a label selector"},

		{"clusters awsSubnets without ec2", "jobs: {}\nclusters:\n  - {name: a, awsSubnets: [subnet-123]}\n", "clusters[0].awsSubnets[0]", "is not a subnet id"},
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

func TestEKSSectionsLoad(t *testing.T) {
	// An empty section, {} or no value at all, is present and takes every default.
	for _, body := range []string{"jobs: {}\npods: {}\n", "jobs:\npods:\n"} {
		c, err := Parse([]byte(eksBase+body), "t.yaml")
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if c.Jobs == nil || c.Pods == nil {
			t.Fatalf("%q: jobs %v, pods %v; want both present", body, c.Jobs, c.Pods)
		}
		if c.Jobs.Succeeded.Std() != 24*time.Hour || c.Pods.Succeeded.Std() != time.Hour ||
			c.Jobs.KeepCronJobHistory == nil || !*c.Jobs.KeepCronJobHistory || c.Pods.KeepCronJobHistory != nil ||
			c.Jobs.TTLGrace == nil || c.Jobs.TTLGrace.Std() != time.Hour || c.Pods.TTLGrace != nil ||
			!reflect.DeepEqual(c.Pods.Namespaces.Exclude, []string{"kube-system"}) {
			t.Errorf("%q: jobs %+v, pods %+v", body, *c.Jobs, *c.Pods)
		}
	}
	// Without the sections, no EKS work.
	c, err := Parse([]byte(eksBase), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs != nil || c.Pods != nil {
		t.Errorf("absent sections: jobs %v, pods %v; want nil", c.Jobs, c.Pods)
	}

	// Explicit values kept as written.
	c, err = Parse([]byte(eksBase+`jobs: {keepCronJobHistory: false, ttlGrace: 0s, selector: "team=data,tier!=critical"}
pods: {ownerKinds: [TaskRun], namespaces: {include: ["batch-*"], exclude: []}}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *c.Jobs.KeepCronJobHistory || c.Jobs.TTLGrace == nil || *c.Jobs.TTLGrace != 0 {
		t.Errorf("jobs = %+v", *c.Jobs)
	}
	if !reflect.DeepEqual(c.Pods.OwnerKinds, []string{"TaskRun"}) || len(c.Pods.Namespaces.Exclude) != 0 {
		t.Errorf("pods = %+v", *c.Pods)
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
