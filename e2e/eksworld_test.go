package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

const (
	ec2Region    = "us-east-1"
	retentionKey = "reclaim.dev/retention"
	protectKey   = "reclaim.dev/protect"
)

// eksWorld is one test's EKS fleet: a fresh EC2 fake (one account, one
// region), the two shared clusters with a namespace of the test's own in
// each, and a directory holding the config, state file and audit log.
type eksWorld struct {
	t      *testing.T
	dir    string
	ec2    *ec2fake.Server
	now    time.Time
	prefix string
	ns     string // the test's namespace, in both clusters
	// Subnets: subA only prod-a may use, subB only prod-b, subAB both.
	subA, subAB, subB string
	// prodB overrides how prod-b is reached: kubeconfig path and context.
	prodBKubeconfig, prodBContext string
	// jobs, pods and ec2 are the sections' bodies; "-" leaves a section out.
	jobsYAML, podsYAML, ec2YAML string
	// fleetYAML is the fleet section's body; "" turns discovery off.
	fleetYAML string
	// omitProdB leaves prod-b out of the config, as a user who forgot it would.
	omitProdB bool
	// extraYAML is appended to the config (a notify section).
	extraYAML string
	// editYAML, when set, rewrites the config before it is written.
	editYAML func(string) string
	// declarePlaces has prod-a and prod-b say where they live (EKS, the
	// EC2 fake's account and region): with discovery on, a cluster tag
	// names a configured cluster only where the entry says it lives.
	declarePlaces bool
	// finished is when the seeded Jobs and Pods finish, relative to now.
	t0 time.Time
}

func newEKSWorld(t *testing.T) *eksWorld {
	t.Helper()
	n := worlds.Add(1)
	w := &eksWorld{t: t, dir: t.TempDir(), ec2: ec2fake.New(ec2fake.Options{Region: ec2Region, Account: account}),
		// A minute ahead of the wall clock: the objects a test creates are
		// then never younger than the first run's now.
		now: time.Now().UTC().Add(time.Minute).Truncate(time.Second), prodBKubeconfig: prodB.Kubeconfig, prodBContext: "admin"}
	w.ec2.Start()
	t.Cleanup(w.ec2.Close)
	w.prefix = strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(w.prefix) > 30 {
		w.prefix = strings.Trim(w.prefix[len(w.prefix)-30:], "-")
	}
	w.prefix = fmt.Sprintf("%s-%d", w.prefix, n)
	w.ns = w.prefix
	w.t0 = w.now
	// Address ranges of the test's own (10.<n>.x.x), so that no pod another
	// test left behind can show an address of these interfaces.
	oct := 10 + int(n)%240
	w.subA, w.subAB, w.subB = fmt.Sprintf("subnet-%08x", 0xa000+n), fmt.Sprintf("subnet-%08x", 0xab00+n), fmt.Sprintf("subnet-%08x", 0xb000+n)
	w.ec2.AddSubnet(ec2fake.Subnet{ID: w.subA, AZ: ec2Region + "a", CIDR: fmt.Sprintf("10.%d.0.0/20", oct)})
	w.ec2.AddSubnet(ec2fake.Subnet{ID: w.subAB, AZ: ec2Region + "b", CIDR: fmt.Sprintf("10.%d.16.0/20", oct)})
	w.ec2.AddSubnet(ec2fake.Subnet{ID: w.subB, AZ: ec2Region + "c", CIDR: fmt.Sprintf("10.%d.32.0/20", oct)})
	for _, c := range []*testenv.Cluster{prodA, prodB} {
		ctx := context.Background()
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		// No namespace controller runs: empty the namespace instead.
		t.Cleanup(func() {
			ctx, zero, bg := context.Background(), int64(0), metav1.DeletePropagationBackground
			_ = c.Client.BatchV1().Jobs(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{})
			_ = c.Client.CoreV1().Pods(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			_ = c.Client.BatchV1().CronJobs(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		})
	}
	return w
}

func (w *eksWorld) statePath() string { return filepath.Join(w.dir, "state.json") }
func (w *eksWorld) auditPath() string { return filepath.Join(w.dir, "audit.jsonl") }

// configPath writes the run's YAML config, the way a user would: prod-a may
// use subA and subAB, prod-b subAB and subB; Jobs and Pods only in the
// test's namespace; every interface deletion allowed past a 6h grace.
func (w *eksWorld) configPath() string {
	w.t.Helper()
	section := func(name, body, def string) string {
		switch body {
		case "-":
			return ""
		case "":
			body = def
		}
		return name + ":\n" + body
	}
	prodBYAML := fmt.Sprintf(`  - name: prod-b
    kubeconfig: %s
    context: %s
    timeout: 10s
    awsSubnets: [%s, %s]
`, w.prodBKubeconfig, w.prodBContext, w.subAB, w.subB)
	if w.omitProdB {
		prodBYAML = ""
	}
	fleet := w.fleetYAML
	if fleet == "" {
		fleet = "  discover: false\n"
	}
	y := fmt.Sprintf(`clusters:
  - name: prod-a
    kubeconfig: %s
    context: admin
    timeout: 30s
    awsSubnets: [%s, %s]
%sfleet:
%s%s%s%sstate:
  file: %s
audit:
  file: %s
%s`, prodA.Kubeconfig, w.subA, w.subAB, prodBYAML, fleet,
		section("ec2Interfaces", w.ec2YAML, fmt.Sprintf(`  endpoint: %s
  networks:
    - account: "%s"
      region: %s
      subnets: [%s, %s, %s]
  requestsPerSecond: 20
  burst: 100
  deletesPerSecond: 5
  deleteBurst: 100
  maxAttempts: 3
  interfaces:
    grace: 6h
    maxDeletePercent: 100%%
`, w.ec2.URL(), account, ec2Region, w.subA, w.subAB, w.subB)),
		section("jobs", w.jobsYAML, fmt.Sprintf("  namespaces:\n    include: [%s]\n  succeeded: 24h\n  failed: 7d\n  grace: 1h\n", w.ns)),
		section("pods", w.podsYAML, fmt.Sprintf("  namespaces:\n    include: [%s]\n  succeeded: 1h\n  failed: 7d\n  grace: 1h\n", w.ns)),
		w.statePath(), w.auditPath(), w.extraYAML)
	if w.declarePlaces {
		place := fmt.Sprintf("    platform: eks\n    account: \"%s\"\n    location: %s\n", account, ec2Region)
		for _, n := range []string{"prod-a", "prod-b"} {
			y = strings.Replace(y, "  - name: "+n+"\n", "  - name: "+n+"\n"+place, 1)
		}
	}
	if w.editYAML != nil {
		y = w.editYAML(y)
	}
	p := filepath.Join(w.dir, "reclaim.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// run does one reclaim run at w.now, through config.Load and app.Run.
func (w *eksWorld) run(apply bool) *report.Report {
	w.t.Helper()
	return runConfig(w.t, w.configPath(), w.now, apply)
}

func (w *eksWorld) audit() []audit.Record {
	w.t.Helper()
	return (&world{t: w.t, dir: w.dir}).audit()
}

// deletes counts the audit log's delete records of id.
func (w *eksWorld) deletes(id string) int {
	n := 0
	for _, r := range w.audit() {
		if r.ID == id && r.Action == "delete" && (r.Result == "deleted" || r.Result == "already-gone") {
			n++
		}
	}
	return n
}

// at is a metav1.Time d before the world's start.
func (w *eksWorld) ago(d time.Duration) metav1.Time { return metav1.NewTime(w.t0.Add(-d)) }

func jobPodSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}, RestartPolicy: corev1.RestartPolicyNever}
}

// job creates a Job in c (with the given labels, annotations and owner) and
// gives it a status through the status subresource, as the Job controller
// does: "Complete" or "Failed" finished d ago (with the conditions 1.31's
// validation requires), "" running.
func (w *eksWorld) job(c *testenv.Cluster, name, status string, d time.Duration, mod func(*batchv1.Job)) *batchv1.Job {
	w.t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: jobPodSpec()}}}
	if mod != nil {
		mod(j)
	}
	j, err := c.Client.BatchV1().Jobs(w.ns).Create(ctx, j, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("create job %s in %s: %v", name, c.Name, err)
	}
	start, end := w.ago(d+10*time.Minute), w.ago(d)
	switch status {
	case "Complete":
		j.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &end, Succeeded: 1,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "CompletionsReached"},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "CompletionsReached"},
			}}
	case "Failed":
		j.Status = batchv1.JobStatus{StartTime: &start, Failed: 1,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "BackoffLimitExceeded"},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "BackoffLimitExceeded"},
			}}
	case "":
		j.Status = batchv1.JobStatus{StartTime: &start, Active: 1}
	default:
		w.t.Fatalf("job status %q", status)
	}
	j, err = c.Client.BatchV1().Jobs(w.ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
	if err != nil {
		w.t.Fatalf("status of job %s in %s: %v", name, c.Name, err)
	}
	return j
}

// pod creates a pod in c, owned by the Job if one is given, and gives it a
// status through the status subresource: phase, its container terminated
// d ago (for a finished phase), and its address ip if not "".
func (w *eksWorld) pod(c *testenv.Cluster, name string, owner *batchv1.Job, phase corev1.PodPhase, d time.Duration, ip string) *corev1.Pod {
	w.t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}, Spec: jobPodSpec()}
	if owner != nil {
		yes := true
		p.Labels = map[string]string{"batch.kubernetes.io/job-name": owner.Name}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.Name, UID: owner.UID,
			Controller: &yes, BlockOwnerDeletion: &yes}}
	}
	p, err := c.Client.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("create pod %s in %s: %v", name, c.Name, err)
	}
	p.Status = corev1.PodStatus{Phase: phase}
	if ip != "" {
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		code := int32(0)
		if phase == corev1.PodFailed {
			code = 1
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code,
				StartedAt: w.ago(d + 5*time.Minute), FinishedAt: w.ago(d)}}}}
	}
	p, err = c.Client.CoreV1().Pods(w.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		w.t.Fatalf("status of pod %s in %s: %v", name, c.Name, err)
	}
	return p
}

// getJob returns the Job (nil when it is gone).
func (w *eksWorld) getJob(c *testenv.Cluster, name string) *batchv1.Job {
	w.t.Helper()
	j, err := c.Client.BatchV1().Jobs(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return j
}

// getPod returns the pod (nil when it is gone).
func (w *eksWorld) getPod(c *testenv.Cluster, name string) *corev1.Pod {
	w.t.Helper()
	p, err := c.Client.CoreV1().Pods(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *eksWorld) jobGone(c *testenv.Cluster, name string) bool {
	j := w.getJob(c, name)
	return j == nil || j.DeletionTimestamp != nil
}

func (w *eksWorld) podGone(c *testenv.Cluster, name string) bool {
	p := w.getPod(c, name)
	return p == nil || p.DeletionTimestamp != nil
}

// cniInterface seeds a detached interface the VPC CNI left behind (its tag
// and description) in subnet.
func (w *eksWorld) cniInterface(subnet string) string {
	return w.ec2.AddInterface(ec2fake.Interface{Subnet: subnet, Description: "aws-K8S-i-0123456789abcdef0",
		Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0123456789abcdef0", "cluster.k8s.amazonaws.com/name": "prod-a"}})
}

// startEKS serves an EKS fake of the test account in region until the
// test ends.
func startEKS(t *testing.T, region string) *eksfake.Server {
	t.Helper()
	f := eksfake.New(eksfake.Options{Account: account, Region: region})
	f.Start()
	t.Cleanup(f.Close)
	return f
}

func eniID(eni string) string { return ec2interface.ID(account, ec2Region, eni) }

func (w *eksWorld) jobID(c *testenv.Cluster, name string) string {
	return k8sjob.ID(c.Name, w.ns, name)
}
func (w *eksWorld) podID(c *testenv.Cluster, name string) string {
	return k8spod.ID(c.Name, w.ns, name)
}

// want fails unless the report's decision for id has the action (and, if
// class is not "", the class).
func want(t *testing.T, rep *report.Report, id string, action engine.Action, class string) engine.Decision {
	t.Helper()
	d := decision(t, rep, id)
	if d.Action != action || (class != "" && d.Class != class) {
		t.Fatalf("%s: %s/%s (%s), want %s/%s\n%s", id, d.Action, d.Class, d.Why(), action, class, text(rep))
	}
	return d
}
