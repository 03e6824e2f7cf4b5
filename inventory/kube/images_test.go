package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"reclaim.dev/reclaim/inventory"
)

const (
	ecrAcct = "123456789012"
	ecrHost = ecrAcct + ".dkr.ecr.us-east-1.amazonaws.com"
	dgstA   = "sha256:65e409ae5b2d553181bd086cc59aaaaa19c9b5b6e9aadd3c7b8122606f03744a"
	dgstB   = "sha256:f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d"
)

func imgOpts() Options {
	o := opts()
	o.Images = true
	o.Accounts = []string{ecrAcct}
	return o
}

func om(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func tmpl(images ...string) corev1.PodTemplateSpec {
	var cs []corev1.Container
	for i, im := range images {
		cs = append(cs, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: im})
	}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}
}

func ecr(repoTag string) string { return ecrHost + "/" + repoTag }

// key is a compact form of a use for comparisons.
func key(u inventory.ImageUse) string {
	r := u.Ref
	s := r.Repo.Account + "|" + r.Repo.Region + "|" + r.Repo.Name + "|" + r.Tag + "|" + r.Digest
	if u.Problem != "" {
		s += "|problem"
	}
	return s
}

func useOf(t *testing.T, r inventory.ClusterRefs, k string) inventory.ImageUse {
	t.Helper()
	for _, u := range r.Images {
		if key(u) == k {
			return u
		}
	}
	var have []string
	for _, u := range r.Images {
		have = append(have, key(u))
	}
	t.Fatalf("no image %s in\n%s", k, strings.Join(have, "\n"))
	return inventory.ImageUse{}
}

func imageCluster() []runtime.Object {
	zero := int32(0)
	revData, _ := json.Marshal(map[string]any{
		"spec": map[string]any{"template": map[string]any{
			"$patch": "replace",
			"spec": map[string]any{
				"containers":     []any{map[string]any{"name": "db", "image": ecr("db:13")}},
				"initContainers": []any{map[string]any{"name": "init", "image": ecr("db-init:1")}},
			},
		}},
	})
	oddRev, _ := json.Marshal(map[string]any{"something": map[string]any{"else": []any{map[string]any{"containers": []any{map[string]any{"name": "x", "image": ecr("odd:1")}}}}}})
	return []runtime.Object{
		&corev1.Pod{
			ObjectMeta: om("apps", "web-1"),
			Spec: corev1.PodSpec{
				InitContainers:      []corev1.Container{{Name: "migrate", Image: ecr("migrate:7")}},
				Containers:          []corev1.Container{{Name: "web", Image: ecr("web:2")}, {Name: "proxy", Image: "envoyproxy/envoy:v1.30"}},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: ecr("debug:latest")}}},
				Volumes:             []corev1.Volume{{Name: "models", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: ecr("models:v3")}}}},
			},
			Status: corev1.PodStatus{
				InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", Image: ecrAcct + ".dkr.ecr.us-east-1.amazonaws.com:443/migrate:7", ImageID: ecr("migrate@" + dgstB)}},
				ContainerStatuses: []corev1.ContainerStatus{
					{Name: "web", Image: ecr("web:1"), ImageID: "docker-pullable://" + ecr("web@"+dgstA)},
					{Name: "proxy", Image: "docker.io/envoyproxy/envoy:v1.30", ImageID: "docker.io/envoyproxy/envoy@" + dgstB},
				},
				EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debug", ImageID: "docker://" + dgstA}},
			},
		},
		// A pod of the Deployment below; Where must be the smallest user.
		&corev1.Pod{ObjectMeta: om("apps", "api-7d9-abc"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: ecr("api:1.0")}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "api", ImageID: ""}}}},
		&appsv1.Deployment{ObjectMeta: om("apps", "api"), Spec: appsv1.DeploymentSpec{Template: tmpl(ecr("api:1.0"))}},
		&appsv1.ReplicaSet{ObjectMeta: om("apps", "api-7d9"), Spec: appsv1.ReplicaSetSpec{Template: tmpl(ecr("api:1.0"))}},
		// Scaled to zero: a rollback target.
		&appsv1.ReplicaSet{ObjectMeta: om("apps", "api-5c4"), Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Template: tmpl(ecr("api:0.9"))}},
		&appsv1.StatefulSet{ObjectMeta: om("data", "pg"), Spec: appsv1.StatefulSetSpec{Template: tmpl(ecr("db:14"))}},
		&appsv1.DaemonSet{ObjectMeta: om("kube-system", "agent"), Spec: appsv1.DaemonSetSpec{Template: tmpl(ecr("agent@" + dgstA))}},
		&appsv1.ControllerRevision{ObjectMeta: om("data", "pg-6b8f"), Data: runtime.RawExtension{Raw: revData}, Revision: 1},
		&appsv1.ControllerRevision{ObjectMeta: om("data", "odd-1"), Data: runtime.RawExtension{Raw: oddRev}, Revision: 1},
		&batchv1.Job{ObjectMeta: om("batch", "backfill"), Spec: batchv1.JobSpec{Template: tmpl(ecr("backfill:3"))}},
		&batchv1.CronJob{ObjectMeta: om("batch", "nightly"), Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl(
			ecr("nightly:{{ .Values.tag }}"),         // a Helm template that was never rendered: kept loosely
			acct2Host+"/ecr-public/nginx/nginx:1.27", // pull-through cache, China
			"public.ecr.aws/nginx/nginx:1.27",        // ECR Public: not ours
		)}}}},
	}
}

const acct2Host = "210987654321.dkr.ecr.cn-north-1.amazonaws.com.cn"

func TestCollectImages(t *testing.T) {
	cs := fake.NewSimpleClientset(imageCluster()...)
	r := Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	if !r.Complete || !r.ImagesListed || len(r.Problems) != 0 {
		t.Fatalf("complete=%v imagesListed=%v problems=%q", r.Complete, r.ImagesListed, r.Problems)
	}
	if len(r.Accounts) != 1 || r.Accounts[0] != ecrAcct {
		t.Fatalf("accounts %v", r.Accounts)
	}
	want := map[string]struct {
		where string
		users int
	}{
		ecrAcct + "|us-east-1|migrate|7|":                      {"c1/apps/Pod/web-1 (migrate)", 1}, // spec and status image: one user
		ecrAcct + "|us-east-1|migrate||" + dgstB:               {"c1/apps/Pod/web-1 (migrate)", 1},
		ecrAcct + "|us-east-1|web|2|":                          {"c1/apps/Pod/web-1 (web)", 1},
		ecrAcct + "|us-east-1|web|1|":                          {"c1/apps/Pod/web-1 (web)", 1}, // still running the old image
		ecrAcct + "|us-east-1|web||" + dgstA:                   {"c1/apps/Pod/web-1 (web)", 1},
		ecrAcct + "|us-east-1|debug|latest|":                   {"c1/apps/Pod/web-1 (debug)", 1},
		ecrAcct + "|us-east-1|models|v3|":                      {"c1/apps/Pod/web-1 (volume models)", 1},
		ecrAcct + "|us-east-1|api|1.0|":                        {"c1/apps/Deployment/api (c0)", 3},
		ecrAcct + "|us-east-1|api|0.9|":                        {"c1/apps/ReplicaSet/api-5c4 (c0)", 1},
		ecrAcct + "|us-east-1|db|14|":                          {"c1/data/StatefulSet/pg (c0)", 1},
		ecrAcct + "|us-east-1|db|13|":                          {"c1/data/ControllerRevision/pg-6b8f (db)", 1},
		ecrAcct + "|us-east-1|db-init|1|":                      {"c1/data/ControllerRevision/pg-6b8f (init)", 1},
		ecrAcct + "|us-east-1|odd|1|":                          {"c1/data/ControllerRevision/odd-1 (x)", 1},
		ecrAcct + "|us-east-1|agent||" + dgstA:                 {"c1/kube-system/DaemonSet/agent (c0)", 1},
		ecrAcct + "|us-east-1|backfill|3|":                     {"c1/batch/Job/backfill (c0)", 1},
		ecrAcct + "|us-east-1|nightly|||problem":               {"c1/batch/CronJob/nightly (c0)", 1},
		"210987654321|cn-north-1|ecr-public/nginx/nginx|1.27|": {"c1/batch/CronJob/nightly (c1)", 1},
	}
	if len(r.Images) != len(want) {
		var have []string
		for _, u := range r.Images {
			have = append(have, key(u))
		}
		t.Errorf("got %d images, want %d:\n%s", len(r.Images), len(want), strings.Join(have, "\n"))
	}
	for k, w := range want {
		u := useOf(t, r, k)
		if u.Where != w.where || u.Users != w.users {
			t.Errorf("%s: where %q users %d, want %q %d", k, u.Where, u.Users, w.where, w.users)
		}
	}
	// Sorted, deterministic.
	for i := 1; i < len(r.Images); i++ {
		a, b := r.Images[i-1].Ref, r.Images[i].Ref
		if a.Repo.Account > b.Repo.Account || (a.Repo.Account == b.Repo.Account && a.Repo.Region == b.Repo.Region && a.Repo.Name > b.Repo.Name) {
			t.Fatalf("images not sorted at %d: %+v, %+v", i, a, b)
		}
	}
	// The same cluster again gives the same answer.
	r2 := Collect(context.Background(), "c1", fake.NewSimpleClientset(imageCluster()...), newDyn(), imgOpts())
	for i := range r.Images {
		if r.Images[i] != r2.Images[i] {
			t.Fatalf("run 2 differs at %d: %+v vs %+v", i, r.Images[i], r2.Images[i])
		}
	}
}

func TestCollectImagesOffListsNothingMore(t *testing.T) {
	cs := fake.NewSimpleClientset(imageCluster()...)
	o := opts()
	o.Accounts = []string{ecrAcct}
	r := Collect(context.Background(), "c1", cs, newDyn(), o)
	if !r.Complete || r.ImagesListed || len(r.Images) != 0 {
		t.Fatalf("complete=%v imagesListed=%v images=%v", r.Complete, r.ImagesListed, r.Images)
	}
	for _, a := range cs.Actions() {
		if res := a.GetResource().Resource; res != "persistentvolumes" && res != "persistentvolumeclaims" && res != "pods" {
			t.Errorf("listed %s with Images off", res)
		}
	}
}

func TestCollectImagesListsEachKindOnce(t *testing.T) {
	cs := fake.NewSimpleClientset(imageCluster()...)
	Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	n := map[string]int{}
	for _, a := range cs.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("verb %s on %s", a.GetVerb(), a.GetResource().Resource)
		}
		n[a.GetResource().GroupResource().String()]++
	}
	for _, res := range []string{"pods", "persistentvolumes", "persistentvolumeclaims", resDeployments, resReplicaSets, resStatefulSets, resDaemonSets, resControllerRevisions, resJobs, resCronJobs} {
		if n[res] != 1 {
			t.Errorf("%s listed %d times, want 1", res, n[res])
		}
	}
}

func TestCollectImagesForbidden(t *testing.T) {
	cs := fake.NewSimpleClientset(imageCluster()...)
	cs.PrependReactor("list", "replicasets", errReactor(apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "",
		fmt.Errorf(`User "system:serviceaccount:reclaim:reclaim" cannot list resource "replicasets" in API group "apps" at the cluster scope`))))
	r := Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	if r.Complete || r.ImagesListed {
		t.Fatalf("complete=%v imagesListed=%v, want both false", r.Complete, r.ImagesListed)
	}
	want := "list replicasets.apps: forbidden — the service account needs list on replicasets.apps (see deploy/base/rbac.yaml)"
	if len(r.Problems) != 1 || r.Problems[0] != want {
		t.Fatalf("problems %q\nwant %q", r.Problems, want)
	}
	// What was listed is still reported; the PV/PVC side is untouched.
	useOf(t, r, ecrAcct+"|us-east-1|db|14|")
	if u := useOf(t, r, ecrAcct+"|us-east-1|api|1.0|"); u.Users != 2 {
		t.Fatalf("api users %d, want 2 without the ReplicaSet", u.Users)
	}
}

func TestCollectImagesPodsFailNotListed(t *testing.T) {
	cs := fake.NewSimpleClientset(imageCluster()...)
	cs.PrependReactor("list", "pods", errReactor(apierrors.NewUnauthorized("token expired")))
	r := Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	if r.Complete || r.ImagesListed || len(r.Problems) != 1 {
		t.Fatalf("complete=%v imagesListed=%v problems=%q", r.Complete, r.ImagesListed, r.Problems)
	}
}

func rsList(items []runtime.Object, cont string) runtime.Object {
	l := &appsv1.ReplicaSetList{ListMeta: metav1.ListMeta{Continue: cont}}
	for _, o := range items {
		l.Items = append(l.Items, *o.(*appsv1.ReplicaSet))
	}
	return l
}

// An expired continue token re-lists everything: users must not be counted twice.
func TestCollectImagesExpiredContinue(t *testing.T) {
	var rss []runtime.Object
	for i := range 9 {
		rss = append(rss, &appsv1.ReplicaSet{ObjectMeta: om("apps", fmt.Sprintf("rs-%d", i)), Spec: appsv1.ReplicaSetSpec{Template: tmpl(ecr("shared:1"), ecr(fmt.Sprintf("own:%d", i)))}})
	}
	cs := fake.NewSimpleClientset()
	rsR := &pagingReactor{items: rss, mkList: rsList, expireAt: 4}
	cs.PrependReactor("list", "replicasets", rsR.react)
	r := Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	if !r.Complete || !r.ImagesListed {
		t.Fatalf("complete=%v problems=%q", r.Complete, r.Problems)
	}
	if !rsR.expired {
		t.Fatal("the continue token never expired")
	}
	if u := useOf(t, r, ecrAcct+"|us-east-1|shared|1|"); u.Users != 9 || u.Where != "c1/apps/ReplicaSet/rs-0 (c0)" {
		t.Fatalf("shared: %+v, want 9 users", u)
	}
	if len(r.Images) != 10 {
		t.Fatalf("%d images, want 10", len(r.Images))
	}
	if len(rsR.limits) < 4 || rsR.limits[len(rsR.limits)-1] != 0 {
		t.Fatalf("no full re-list: limits %v", rsR.limits)
	}
}

func TestCollectImagesRelistFails(t *testing.T) {
	cs := fake.NewSimpleClientset()
	rsR := &pagingReactor{items: []runtime.Object{
		&appsv1.ReplicaSet{ObjectMeta: om("a", "x"), Spec: appsv1.ReplicaSetSpec{Template: tmpl(ecr("x:1"))}},
		&appsv1.ReplicaSet{ObjectMeta: om("a", "y"), Spec: appsv1.ReplicaSetSpec{Template: tmpl(ecr("y:1"))}},
		&appsv1.ReplicaSet{ObjectMeta: om("a", "z"), Spec: appsv1.ReplicaSetSpec{Template: tmpl(ecr("z:1"))}},
	}, mkList: rsList, expireAt: 2, failFull: apierrors.NewTimeoutError("slow", 1)}
	cs.PrependReactor("list", "replicasets", rsR.react)
	r := Collect(context.Background(), "c1", cs, newDyn(), imgOpts())
	if r.Complete || r.ImagesListed || len(r.Problems) != 1 || !strings.HasPrefix(r.Problems[0], "list replicasets.apps: continue token expired (410) and the full re-list failed") {
		t.Fatalf("complete=%v imagesListed=%v problems=%q", r.Complete, r.ImagesListed, r.Problems)
	}
}

// A dockershim-era pod as the API returns it (zalando/skipper fixture, image
// moved to ECR): the docker-pullable imageID gives the running digest.
func TestCollectImagesDockershimPod(t *testing.T) {
	raw := `{"metadata":{"name":"skipper-ingress-03zmn","namespace":"kube-system"},
"spec":{"containers":[{"name":"skipper-ingress","image":"` + ecr("pathfinder/skipper:v0.9.120") + `"}]},
"status":{"phase":"Running","containerStatuses":[{"name":"skipper-ingress","ready":true,"restartCount":0,
"image":"` + ecr("pathfinder/skipper:v0.9.120") + `",
"imageID":"docker-pullable://` + ecr("pathfinder/skipper@"+dgstA) + `",
"containerID":"docker://fe69c8b4ec6e2f99aa4177a8ce759aba25edb505689f0ba8ec48cd948c146f7a"}]}}`
	var p corev1.Pod
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	r := Collect(context.Background(), "c1", fake.NewSimpleClientset(&p), newDyn(), imgOpts())
	useOf(t, r, ecrAcct+"|us-east-1|pathfinder/skipper|v0.9.120|")
	if u := useOf(t, r, ecrAcct+"|us-east-1|pathfinder/skipper||"+dgstA); u.Where != "c1/kube-system/Pod/skipper-ingress-03zmn (skipper-ingress)" {
		t.Fatalf("where %q", u.Where)
	}
}

func TestCollectAllPassesImageOptions(t *testing.T) {
	// A target whose clients cannot be built still carries its accounts.
	res := CollectAll(context.Background(), []Target{{Name: "bad", Kubeconfig: "/nonexistent/kubeconfig", Accounts: []string{"111111111111"}}},
		Options{Accounts: []string{ecrAcct}}, 1)
	if len(res) != 1 || len(res[0].Accounts) != 1 || res[0].Accounts[0] != "111111111111" || res[0].Complete {
		t.Fatalf("%+v", res)
	}
}
