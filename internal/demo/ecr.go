package demo

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// The demo registry: AWS's documented example account, in Tokyo.
const (
	Account   = "123456789012"
	ECRRegion = "ap-northeast-1"
	APIRepo   = "shop/api"
	WebRepo   = "shop/web"
)

// Images is what the demo's ECR story hinges on, for the narration and tests.
type Images struct {
	// ByDigest runs in prod-a only by digest; RollbackRS only through a
	// ReplicaSet scaled to zero in prod-b; Index is a multi-arch index in use
	// in prod-a whose children are untagged. OldIndex is unused and goes with
	// its children.
	ByDigest, RollbackRS, Index, OldIndex string
	IndexChildren, OldChildren            []string
	Total                                 int
}

const day = 24 * time.Hour

func image(repo, ref string) string {
	return Account + ".dkr.ecr." + ECRRegion + ".amazonaws.com/" + repo + ref
}

// SeedECR fills the fake with shop/api at 9,990 of its 10,000 images (CI
// pushes a build every 40 minutes) and a quiet shop/web, adds the workloads
// that use them to the clusters, and records that the oldest candidates were
// already seen by earlier runs.
func SeedECR(srv *ecrfake.Server, f *Fleet, now time.Time) Images {
	const total = 9990
	var im Images
	srv.AddRepository(Account, APIRepo, now.Add(-400*day), nil)
	srv.AddRepository(Account, WebRepo, now.Add(-400*day), nil)
	start := now.Add(-time.Duration(total) * 40 * time.Minute)
	var imgs []ecrfake.Image
	build := 0
	push := func(img ecrfake.Image) string {
		imgs = append(imgs, img)
		return img.Digest
	}
	at := func(i int) time.Time { return start.Add(time.Duration(i) * 40 * time.Minute) }
	for len(imgs) < total {
		i := len(imgs)
		switch i {
		case 20: // a multi-arch release still running in prod-a: the index carries the tag, the children none
			kids := []ecrfake.Image{ecrfake.NewManifest("api-multi-amd64", at(i)), ecrfake.NewManifest("api-multi-arm64", at(i)),
				ecrfake.NewManifest("api-multi-attestation", at(i))}
			for _, k := range kids {
				im.IndexChildren = append(im.IndexChildren, push(k))
			}
			im.Index = push(ecrfake.NewIndex(at(i), im.IndexChildren, "multiarch-2025-q1"))
		case 5: // an old multi-arch build nobody runs: it goes with its children
			kids := []ecrfake.Image{ecrfake.NewManifest("api-old-amd64", at(i)), ecrfake.NewManifest("api-old-arm64", at(i))}
			for _, k := range kids {
				im.OldChildren = append(im.OldChildren, push(k))
			}
			im.OldIndex = push(ecrfake.NewIndex(at(i), im.OldChildren, "multiarch-2024-q4"))
		default:
			build++
			tags := []string{fmt.Sprintf("build-%04d", build)}
			if build%1000 == 0 {
				tags = append(tags, fmt.Sprintf("release-%d", build/1000))
			}
			img := ecrfake.NewManifest(fmt.Sprintf("api-%d", build), at(i), tags...)
			img.SizeBytes = 180_000_000 + int64(build%50)*1_000_000
			if build%250 == 7 {
				img.LastPull = now.Add(-time.Duration(build%20) * day) // pulled by a staging job
			}
			d := push(img)
			switch build {
			case 30:
				im.ByDigest = d
			case 60:
				im.RollbackRS = d
			}
		}
	}
	srv.AddImages(Account, APIRepo, imgs)
	im.Total = len(imgs)
	var web []ecrfake.Image
	for i := range 1200 {
		web = append(web, ecrfake.NewManifest(fmt.Sprintf("web-%d", i), now.Add(-time.Duration(1200-i)*6*time.Hour), fmt.Sprintf("web-%04d", i)))
	}
	srv.AddImages(Account, WebRepo, web)

	a, b := f.Clusters[0], f.Clusters[1]
	one := int32(1)
	zero := int32(0)
	// prod-a runs the multi-arch release by tag and one build only by digest.
	a.Objects = append(a.Objects,
		deployment("shop", "storefront", &one, image(APIRepo, ":multiarch-2025-q1")),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "payments-0"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: image(APIRepo, "@"+im.ByDigest)}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "api",
				Image: image(APIRepo, "@"+im.ByDigest), ImageID: image(APIRepo, "@"+im.ByDigest)}}}},
		// Not ECR: ignored.
		deployment("kube-system", "fluent-bit", &one, "docker.io/fluent/fluent-bit:3.1"),
	)
	// prod-b: checkout was rolled forward; its old ReplicaSet, scaled to zero,
	// is the rollback target and the only user of build-0060.
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout-6d9f7c"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Template: podTemplate("checkout", image(APIRepo, ":build-0060"))}}
	b.Objects = append(b.Objects, rs,
		deployment("shop", "checkout", &one, image(APIRepo, fmt.Sprintf(":build-%04d", build))),
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly-report"},
			Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: podTemplate("report", image(WebRepo, ":web-1199"))}}}},
	)

	// Earlier runs: the 600 oldest images of shop/api have been candidates
	// for three hours, longer than the 2h grace.
	api := inventory.RepoKey{Account: Account, Region: ECRRegion, Name: APIRepo}
	for _, d := range imgs[:600] {
		f.State.Seen(ecrimage.ID(api, d.Digest), "", now.Add(-3*time.Hour))
	}
	// And, hourly for five days, they counted a push every 40 minutes
	// (simulated history, for the repository's chart).
	if f.State.Usage == nil {
		f.State.Usage = map[string][]layout.Sample{}
	}
	key := "ecr/" + api.String()
	for h := 5 * 24; h >= 1; h-- {
		f.State.Usage[key] = append(f.State.Usage[key], layout.Sample{T: now.Add(-time.Duration(h) * time.Hour), Usage: float64(total - h*3/2)})
	}
	return im
}

func podTemplate(app, img string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: app, Image: img}}}}
}

func deployment(ns, name string, replicas *int32, img string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name, img)}}
}
