package finished_test

// The jobs and pods sections are the k8s-job and k8s-pod kinds' own
// (finished.RegisterSection): decoding, defaults and every problem, with
// the field's full path.

import (
	"reflect"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

func TestSectionProblems(t *testing.T) {
	configtest.Run(t, []configtest.Case{
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
		{"pods retentionAnnotation differs", "jobs: {}\npods: {retentionAnnotation: reclaim.dev/keep}\n", "pods.retentionAnnotation", `"reclaim.dev/keep" differs from jobs.retentionAnnotation "reclaim.dev/retention" — use one annotation for both`},
	}, nil)
}

func TestSectionsLoad(t *testing.T) {
	// An empty section, {} or no value at all, is present and takes every default.
	for _, body := range []string{"jobs: {}\npods: {}\n", "jobs:\npods:\n"} {
		c, err := config.Parse([]byte(configtest.Base+body), "t.yaml")
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		j, p := k8sjob.SectionOf(c), k8spod.SectionOf(c)
		if j == nil || p == nil {
			t.Fatalf("%q: jobs %v, pods %v; want both present", body, j, p)
		}
		if j.Succeeded.Std() != 24*time.Hour || p.Succeeded.Std() != time.Hour ||
			j.KeepCronJobHistory == nil || !*j.KeepCronJobHistory || p.KeepCronJobHistory != nil ||
			j.TTLGrace == nil || j.TTLGrace.Std() != time.Hour || p.TTLGrace != nil ||
			!reflect.DeepEqual(p.Namespaces.Exclude, []string{"kube-system"}) {
			t.Errorf("%q: jobs %+v, pods %+v", body, *j, *p)
		}
	}
	// Without the sections, no Jobs or Pods work.
	c, err := config.Parse([]byte(configtest.Base), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if k8sjob.SectionOf(c) != nil || k8spod.SectionOf(c) != nil || k8sjob.FromConfig(c, nil) != nil || k8spod.FromConfig(c, nil) != nil {
		t.Error("absent sections: present")
	}
	// Explicit values kept as written, and printed so they load back the same.
	c, err = config.Parse([]byte(configtest.Base+`jobs: {keepCronJobHistory: false, ttlGrace: 0s, selector: "team=data,tier!=critical"}
pods: {ownerKinds: [TaskRun], namespaces: {include: ["batch-*"], exclude: []}}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, p := k8sjob.SectionOf(c), k8spod.SectionOf(c)
	if *j.KeepCronJobHistory || j.TTLGrace == nil || *j.TTLGrace != 0 {
		t.Errorf("jobs = %+v", *j)
	}
	if !reflect.DeepEqual(p.OwnerKinds, []string{"TaskRun"}) || len(p.Namespaces.Exclude) != 0 {
		t.Errorf("pods = %+v", *p)
	}
	printed, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse(printed, "printed")
	if err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, printed)
	}
	// Compared as printed: a nil list and an empty one print alike.
	reprinted, err := again.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if string(reprinted) != string(printed) || !reflect.DeepEqual(k8spod.SectionOf(again).OwnerKinds, p.OwnerKinds) {
		t.Errorf("printed and loaded back:\n%s\nthen:\n%s", printed, reprinted)
	}
	if !strings.Contains(string(printed), "\njobs:\n") || !strings.Contains(string(printed), "keepCronJobHistory: false") {
		t.Errorf("the jobs section is not printed as set:\n%s", printed)
	}
}
