package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/batch/batchfake"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/ecs/ecsfake"
	"reclaim.dev/reclaim/providers/lambda/lambdafake"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

const (
	account   = "123456789012" // AWS's documented example account
	ecrRegion = "us-east-1"
)

// imageWorld is one test's registry: a fresh ECR fake with one repository
// named after the test, the two shared clusters, and a config directory.
type imageWorld struct {
	t      *testing.T
	dir    string
	ecr    *ecrfake.Server
	now    time.Time
	repo   string
	digest []string // the seeded images, oldest first
	// prodB overrides how prod-b is reached, and which accounts it may pull from.
	prodBKubeconfig, prodBContext, prodBAccounts string
	ecrYAML                                      string
	// fleetYAML replaces the fleet section's body (discovery off);
	// consumersYAML is the ecr section's consumers list ("-" leaves the key
	// out: the default); extraECRYAML is more of the ecr section.
	fleetYAML, consumersYAML, extraECRYAML string
}

func newImageWorld(t *testing.T, images int, opts ...ecrfake.Options) *imageWorld {
	t.Helper()
	o := ecrfake.Options{Region: ecrRegion}
	if len(opts) > 0 {
		o = opts[0]
		o.Region = ecrRegion
	}
	w := &imageWorld{t: t, dir: t.TempDir(), ecr: ecrfake.New(o), now: time.Now().UTC().Truncate(time.Second),
		prodBKubeconfig: prodB.Kubeconfig, prodBContext: "admin"}
	w.ecr.Start()
	t.Cleanup(w.ecr.Close)
	w.repo = strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	w.repo = fmt.Sprintf("e2e/%s-%d", w.repo, worlds.Add(1))
	w.ecr.AddRepository(account, w.repo, w.now.Add(-365*24*time.Hour), nil)
	var imgs []ecrfake.Image
	for i := range images {
		img := ecrfake.NewManifest(fmt.Sprintf("%s-%d", w.repo, i), w.now.Add(-time.Duration(images-i)*time.Hour-48*time.Hour), fmt.Sprintf("build-%d", i))
		imgs = append(imgs, img)
		w.digest = append(w.digest, img.Digest)
	}
	w.ecr.AddImages(account, w.repo, imgs)
	return w
}

func (w *imageWorld) ref(suffix string) string {
	return account + ".dkr.ecr." + ecrRegion + ".amazonaws.com/" + w.repo + suffix
}

func (w *imageWorld) statePath() string { return filepath.Join(w.dir, "state.json") }

// seen records that every seeded image has been a candidate since t.
func (w *imageWorld) seen(t time.Time) {
	w.t.Helper()
	ids := make([]string, len(w.digest))
	for i, d := range w.digest {
		ids[i] = ecrimage.ID(repoKey(w.repo), d)
	}
	writeSeen(w.t, w.statePath(), t, func(string) string { return "" }, ids...)
}

func (w *imageWorld) configPath() string {
	w.t.Helper()
	pol := w.ecrYAML
	if pol == "" {
		pol = "      limit: 200\n      highWater: 75%\n      target: 50%\n      keepNewest: 5\n"
	}
	fleet := "  discover: false\n"
	if w.fleetYAML != "" {
		fleet = w.fleetYAML
	}
	// Without consumers of its own, a test reads none (the default would
	// ask the real ECS and Lambda of the registry's account).
	consumers := "  consumers: []\n"
	if w.consumersYAML == "-" {
		consumers = "" // the default: the registry's account and region
	} else if w.consumersYAML != "" {
		consumers = "  consumers:\n" + w.consumersYAML
	}
	consumers += w.extraECRYAML
	accounts := ""
	if w.prodBAccounts != "" {
		accounts = "    awsAccounts: [" + w.prodBAccounts + "]\n"
	}
	y := fmt.Sprintf(`clusters:
  - name: prod-a
    kubeconfig: %s
    context: admin
    timeout: 30s
  - name: prod-b
    kubeconfig: %s
    context: %s
    timeout: 10s
%secr:
  endpoint: %s
  registries:
    - account: "%s"
      region: %s
  requestsPerSecond: 200
  maxAttempts: 20
  minAge: 1h
  grace: 1h
  maxDeletePercent: 100%%
%s  repositories:
    - match: "%s"
%sfleet:
%sstate:
  file: %s
audit:
  file: %s
`, prodA.Kubeconfig, w.prodBKubeconfig, w.prodBContext, accounts, w.ecr.URL(), account, ecrRegion, consumers, w.repo, pol,
		fleet, w.statePath(), filepath.Join(w.dir, "audit.jsonl"))
	p := filepath.Join(w.dir, "reclaim.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// readOwnConsumers gives the registry's account and region ECS, Lambda
// and Batch fakes (AWS_ENDPOINT_URL_<SERVICE>) with nothing running, read
// as the default ecr.consumers: with discovery on, the registry's own
// account is a puller whose consumers must be read.
func (w *imageWorld) readOwnConsumers() {
	ef := ecsfake.New(ecsfake.Options{Account: account, Region: ecrRegion})
	lf := lambdafake.New(lambdafake.Options{Account: account, Region: ecrRegion})
	bf := batchfake.New(batchfake.Options{Account: account, Region: ecrRegion})
	for svc, f := range map[string]interface {
		Start()
		Close()
		URL() string
	}{"ECS": ef, "LAMBDA": lf, "BATCH": bf} {
		f.Start()
		w.t.Cleanup(f.Close)
		w.t.Setenv("AWS_ENDPOINT_URL_"+svc, f.URL())
	}
	w.consumersYAML = "-"
}

func (w *imageWorld) run(apply bool) *report.Report {
	w.t.Helper()
	return runConfig(w.t, w.configPath(), w.now, apply)
}

func (w *imageWorld) repoSummary(rep *report.Report) ecrimage.RepoSummary {
	w.t.Helper()
	for _, r := range ecrimage.RepositoriesOf(rep.Plan) {
		if r.Name == w.repo {
			return r
		}
	}
	w.t.Fatalf("no summary for %s", w.repo)
	return ecrimage.RepoSummary{}
}

// create makes objects in a cluster's default namespace and removes them when the test ends.
func create[T any](t *testing.T, c *testenv.Cluster, obj T, mk func(context.Context, T, metav1.CreateOptions) (T, error), del func(context.Context, string, metav1.DeleteOptions) error, name string) {
	t.Helper()
	if _, err := mk(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s in %s: %v", name, c.Name, err)
	}
	t.Cleanup(func() { _ = del(context.Background(), name, metav1.DeleteOptions{}) })
}

func repoKey(repo string) inventory.RepoKey {
	return inventory.RepoKey{Account: account, Region: ecrRegion, Name: repo}
}

func podSpec(img string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img}}, RestartPolicy: corev1.RestartPolicyAlways}
}

// Real API servers hold the references: a pod by digest in prod-a, a
// ReplicaSet scaled to zero and a CronJob in prod-b. Everything they name
// survives an apply that trims the repository from 200 to 100 images.
func TestImagesInUseAcrossClustersSurviveApply(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	name := strings.ReplaceAll(strings.TrimPrefix(w.repo, "e2e/"), "/", "-")
	zero := int32(0)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: podSpec(w.ref("@" + w.digest[0]))}
	create(t, prodA, pod, prodA.Client.CoreV1().Pods("default").Create, prodA.Client.CoreV1().Pods("default").Delete, name)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	tmpl := func(img string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels}, Spec: podSpec(img)}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: sel, Template: tmpl(w.ref(":build-1"))}}
	create(t, prodB, rs, prodB.Client.AppsV1().ReplicaSets("default").Create, prodB.Client.AppsV1().ReplicaSets("default").Delete, name)
	cjTmpl := tmpl(w.ref(":build-2"))
	cjTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: cjTmpl}}}}
	create(t, prodB, cj, prodB.Client.BatchV1().CronJobs("default").Create, prodB.Client.BatchV1().CronJobs("default").Delete, name)

	rep := w.run(true)
	s := w.repoSummary(rep)
	if rep.ExitCode != report.ExitOK || s.Delete != 100 || s.Kept[ecrimage.ClassInUse] != 3 {
		t.Fatalf("exit %d, summary %+v\n%s", rep.ExitCode, s, text(rep))
	}
	for i := range 3 {
		if !w.ecr.Has(account, w.repo, w.digest[i]) {
			t.Errorf("image %d, in use, was deleted", i)
		}
	}
	if got := len(w.ecr.Images(account, w.repo)); got != 100 {
		t.Errorf("%d images left, want 100", got)
	}
	for _, want := range []string{"prod-a/default/Pod/" + name, "prod-b/default/ReplicaSet/" + name, "prod-b/default/CronJob/" + name} {
		if !strings.Contains(text(rep), want) {
			t.Errorf("report does not name %s", want)
		}
	}
}

// Fail closed: prod-b cannot be reached, so no repository it could pull from
// is trimmed; scoped to another account, it no longer blocks.
func TestUnreachableClusterStopsTrims(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	kc, err := testenv.UnreachableKubeconfig(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.prodBKubeconfig, w.prodBContext = kc, "unreachable"
	rep := w.run(true)
	s := w.repoSummary(rep)
	if rep.ExitCode != report.ExitIncomplete || w.ecr.MutatingCalls() != 0 || s.Delete != 0 || s.Mark != 100 {
		t.Fatalf("exit %d, mutating %d, summary %+v", rep.ExitCode, w.ecr.MutatingCalls(), s)
	}
	out := text(rep)
	for _, want := range []string{"cluster prod-b could not be read completely", "no image it could pull", "connection refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// prod-b pulls only from another account: this registry's trim goes on.
	w.prodBAccounts = `"012345678910"`
	rep = w.run(true)
	if s := w.repoSummary(rep); s.Delete != 100 || w.ecr.MutatingCalls() != 1 {
		t.Fatalf("scoped: summary %+v, mutating %d", s, w.ecr.MutatingCalls())
	}
}

// Fail closed: RBAC forbids listing ReplicaSets in prod-b — the rollback
// targets — so nothing is trimmed and the report says what to grant.
func TestForbiddenReplicaSetsStopTrims(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	err := prodB.Grant(context.Background(), testenv.RestrictedUser, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "persistentvolumeclaims", "persistentvolumes"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets", "controllerrevisions"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"list"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.prodBContext = "restricted"
	rep := w.run(true)
	if s := w.repoSummary(rep); rep.ExitCode != report.ExitIncomplete || w.ecr.MutatingCalls() != 0 || s.Mark != 100 {
		t.Fatalf("exit %d, mutating %d, summary %+v\n%s", rep.ExitCode, w.ecr.MutatingCalls(), s, text(rep))
	}
	if out := text(rep); !strings.Contains(out, "replicasets") || !strings.Contains(out, "forbidden") {
		t.Fatalf("report does not say what to fix:\n%s", out)
	}
}

// Throttling is absorbed: the fake allows 4 DescribeImages a second, the
// client asks for more, the SDK's adaptive retry backs off, and the run
// completes with a complete listing.
func TestThrottlingIsAbsorbed(t *testing.T) {
	w := newImageWorld(t, 5000, ecrfake.Options{Rates: map[string]ecrfake.RateLimit{ecrfake.OpDescribeImages: {PerSecond: 4, Burst: 1}}})
	w.ecr.AddRepository(account, w.repo+"-b", w.now.Add(-24*time.Hour), nil)
	var more []ecrfake.Image
	for i := range 3000 {
		more = append(more, ecrfake.NewManifest(fmt.Sprintf("b-%d", i), w.now.Add(-time.Duration(i+48)*time.Hour)))
	}
	w.ecr.AddImages(account, w.repo+"-b", more)
	w.ecrYAML = "      limit: 10000\n"
	rep := w.run(false)
	if rep.ExitCode != report.ExitOK || rep.Plan.Incomplete {
		t.Fatalf("exit %d incomplete %v\n%s", rep.ExitCode, rep.Plan.Incomplete, text(rep))
	}
	if w.ecr.Throttled() == 0 {
		t.Fatal("the fake never throttled: the test does not test throttling")
	}
	if got := w.repoSummary(rep).Images; got != 5000 {
		t.Fatalf("listed %d images, want 5000", got)
	}
	t.Logf("throttled %d times; calls %v", w.ecr.Throttled(), w.ecr.CallCounts())
}

// 250 candidates are deleted in three BatchDeleteImage calls (100, 100, 50),
// after three re-reads; a dry run before makes no mutating call at all.
func TestBatchDeleteIn3CallsAndDryRunMutatesNothing(t *testing.T) {
	w := newImageWorld(t, 500)
	w.seen(w.now.Add(-2 * time.Hour))
	w.ecrYAML = "      limit: 500\n      highWater: 50%\n      target: 50%\n      keepNewest: 5\n"

	rep := w.run(false)
	if w.ecr.MutatingCalls() != 0 || w.repoSummary(rep).Delete != 250 {
		t.Fatalf("dry-run: mutating %d, summary %+v", w.ecr.MutatingCalls(), w.repoSummary(rep))
	}
	if len(w.ecr.Images(account, w.repo)) != 500 {
		t.Fatal("dry-run deleted images")
	}
	w.ecr.ResetCalls()
	rep = w.run(true)
	if rep.ExitCode != report.ExitOK || rep.Outcome.Deleted != 250 {
		t.Fatalf("exit %d deleted %d", rep.ExitCode, rep.Outcome.Deleted)
	}
	// The applier makes 3 calls (reconcile/kinds/ecrimage's unit test counts them exactly).
	// The SDK may repeat one after Go's transport drops an idle connection
	// it was about to reuse (aws/aws-sdk-go-v2#2737); the repeat finds the
	// images gone, which counts as done.
	if got := w.ecr.Calls(ecrfake.OpBatchDeleteImage); got < 3 || got > 4 {
		t.Fatalf("BatchDeleteImage calls %d, want 3", got)
	}
	if got := len(w.ecr.Images(account, w.repo)); got != 250 {
		t.Fatalf("%d images left, want 250", got)
	}
	for _, d := range w.digest[:250] {
		if w.ecr.Has(account, w.repo, d) {
			t.Fatalf("an oldest image is left: %s", d)
		}
	}
}

// A batch where ECR refuses two images: the run reports them (exit 4), the
// rest are deleted, and the next run deletes the two.
func TestPartiallyFailedBatchIsRetried(t *testing.T) {
	w := newImageWorld(t, 300)
	w.seen(w.now.Add(-2 * time.Hour))
	w.ecrYAML = "      limit: 300\n      highWater: 50%\n      target: 50%\n      keepNewest: 5\n"
	w.ecr.FailDelete(account, w.repo, w.digest[3], "KmsError", "The KMS key is disabled")
	w.ecr.FailDelete(account, w.repo, w.digest[7], "KmsError", "The KMS key is disabled")

	rep := w.run(true)
	if rep.ExitCode != report.ExitFailed || rep.Outcome.Failed != 2 || rep.Outcome.Deleted != 148 {
		t.Fatalf("exit %d, failed %d, deleted %d", rep.ExitCode, rep.Outcome.Failed, rep.Outcome.Deleted)
	}
	if out := text(rep); !strings.Contains(out, "KmsError: The KMS key is disabled") {
		t.Fatalf("report does not show the failure:\n%s", out)
	}
	w.ecr.FailDelete(account, w.repo, w.digest[3], "", "")
	w.ecr.FailDelete(account, w.repo, w.digest[7], "", "")
	w.now = w.now.Add(time.Hour)
	rep = w.run(true)
	if rep.ExitCode != report.ExitOK || rep.Outcome.Deleted != 2 {
		t.Fatalf("retry: exit %d, deleted %d\n%s", rep.ExitCode, rep.Outcome.Deleted, text(rep))
	}
	if w.ecr.Has(account, w.repo, w.digest[3]) || w.ecr.Has(account, w.repo, w.digest[7]) {
		t.Fatal("the failed images are still there after the retry")
	}
}

// The real binary honours the AWS SDK's own endpoint configuration: with no
// ecr.endpoint in the file, AWS_ENDPOINT_URL_ECR points it at the fake.
func TestBinaryHonoursAWSEndpointEnv(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	cfg := w.configPath()
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "  endpoint: "+w.ecr.URL()+"\n", "", 1))
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := reclaimCmd(context.Background(), t, testenv.CronJob, []string{"AWS_ENDPOINT_URL_ECR=" + w.ecr.URL()}, "run", "--config", cfg, "-o", "json")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	var rep struct {
		Plan struct {
			Repositories []ecrimage.RepoSummary `json:"repositories"`
		} `json:"plan"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(rep.Plan.Repositories) != 1 || rep.Plan.Repositories[0].Delete != 100 || w.ecr.TotalCalls() == 0 || w.ecr.MutatingCalls() != 0 {
		t.Fatalf("repositories %+v, calls %v", rep.Plan.Repositories, w.ecr.CallCounts())
	}
}

// Images ECS, Lambda and Batch run outside Kubernetes are in use: an
// ACTIVE task definition by tag, a running task by the digest it resolved,
// a Lambda function's published version by digest, a Batch job definition
// by tag. An apply trims around them; when
// ECS may not be read, nothing is trimmed and the report says what to grant.
func TestECSAndLambdaImagesSurviveApply(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	ef := ecsfake.New(ecsfake.Options{Account: account, Region: ecrRegion})
	ef.Start()
	t.Cleanup(ef.Close)
	lf := lambdafake.New(lambdafake.Options{Account: account, Region: ecrRegion})
	lf.Start()
	t.Cleanup(lf.Close)
	ef.AddTaskDefinition(ecsfake.TaskDefinition{Family: "api", Revision: 4, Containers: []ecsfake.Container{{Name: "api", Image: w.ref(":build-0")}}})
	ef.AddTask(ecsfake.Task{Cluster: "batch", ID: "0123abcd", Containers: []ecsfake.Container{{Name: "job", Image: w.ref(":moved-tag"), ImageDigest: w.digest[1]}}})
	lf.AddFunction("resize", lambdafake.Version{ImageURI: w.ref(":build-0")},
		lambdafake.Version{Version: "1", ImageURI: w.ref(":old"), ResolvedImageURI: w.ref("@" + w.digest[2])})
	bf := batchfake.New(batchfake.Options{Account: account, Region: ecrRegion})
	bf.Start()
	t.Cleanup(bf.Close)
	bf.Add(batchfake.JobDefinition{Name: "nightly", Revision: 3, Image: w.ref(":build-3")})
	w.consumersYAML = fmt.Sprintf("    - account: \"%s\"\n      region: %s\n      ecsEndpoint: %s\n      lambdaEndpoint: %s\n      batchEndpoint: %s\n", account, ecrRegion, ef.URL(), lf.URL(), bf.URL())

	ef.Deny(true)
	rep := w.run(true)
	if s := w.repoSummary(rep); w.ecr.MutatingCalls() != 0 || s.Delete != 0 {
		t.Fatalf("ECS denied: mutating %d, summary %+v\n%s", w.ecr.MutatingCalls(), s, text(rep))
	}
	if out := text(rep); !strings.Contains(out, "ecs:ListTaskDefinitions") {
		t.Fatalf("the report does not say what to grant:\n%s", out)
	}

	ef.Deny(false)
	w.seen(w.now.Add(-2 * time.Hour)) // the held run kept clocks only for its own candidates
	rep = w.run(true)
	s := w.repoSummary(rep)
	if rep.ExitCode != report.ExitOK || s.Delete != 100 || s.Kept[ecrimage.ClassInUse] != 4 {
		t.Fatalf("exit %d, summary %+v\n%s", rep.ExitCode, s, text(rep))
	}
	for i := range 4 {
		if !w.ecr.Has(account, w.repo, w.digest[i]) {
			t.Errorf("image %d, used outside Kubernetes, was deleted", i)
		}
	}
	out := text(rep)
	for _, want := range []string{"task-definition api:4", "cluster batch task 0123abcd", "function resize:1", "job-definition nightly:3"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not name %q", want)
		}
	}
}

// With ecr.consumers left out, the registry's own account and region are
// read for ECS, Lambda and Batch: an image only a running ECS task (by
// digest), an ACTIVE task definition (by tag) or a Lambda function runs
// survives --apply. The services are reached the way the SDK is told to
// (AWS_ENDPOINT_URL_<SERVICE>), here the fakes. With one of them denied,
// nothing is trimmed.
func TestDefaultConsumersProtectImages(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	ef := ecsfake.New(ecsfake.Options{Account: account, Region: ecrRegion})
	ef.Start()
	t.Cleanup(ef.Close)
	lf := lambdafake.New(lambdafake.Options{Account: account, Region: ecrRegion})
	lf.Start()
	t.Cleanup(lf.Close)
	bf := batchfake.New(batchfake.Options{Account: account, Region: ecrRegion})
	bf.Start()
	t.Cleanup(bf.Close)
	t.Setenv("AWS_ENDPOINT_URL_ECS", ef.URL())
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", lf.URL())
	t.Setenv("AWS_ENDPOINT_URL_BATCH", bf.URL())
	ef.AddTask(ecsfake.Task{Cluster: "web", ID: "feed0001", Containers: []ecsfake.Container{{Name: "app", Image: w.ref(":gone-tag"), ImageDigest: w.digest[0]}}})
	ef.AddTaskDefinition(ecsfake.TaskDefinition{Family: "cron", Revision: 2, Containers: []ecsfake.Container{{Name: "c", Image: w.ref(":build-1")}}})
	lf.AddFunction("thumbs", lambdafake.Version{ImageURI: w.ref(":build-2")})
	w.consumersYAML = "-"

	lf.Deny(true)
	rep := w.run(true)
	if s := w.repoSummary(rep); w.ecr.MutatingCalls() != 0 || s.Delete != 0 {
		t.Fatalf("Lambda denied: mutating %d, summary %+v\n%s", w.ecr.MutatingCalls(), s, text(rep))
	}
	lf.Deny(false)
	w.seen(w.now.Add(-2 * time.Hour))
	rep = w.run(true)
	if s := w.repoSummary(rep); s.Delete != 100 || s.Kept[ecrimage.ClassInUse] != 3 {
		t.Fatalf("summary %+v\n%s", s, text(rep))
	}
	for i := range 3 {
		if !w.ecr.Has(account, w.repo, w.digest[i]) {
			t.Errorf("image %d, used outside Kubernetes, was deleted with the default consumers", i)
		}
	}
}
