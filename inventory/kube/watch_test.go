package kube_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/inventory/kube"
)

// Against a real kube-apiserver: what exists when the watch starts calls
// nothing; a Deployment's rollback (its template changed) and a new static
// PV each call changed within seconds.
func TestWatchSeesChanges(t *testing.T) {
	c := cluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := namespace(t, c.Client, "watch")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tmpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	deps := c.Client.AppsV1().Deployments(ns)
	must[*appsv1.Deployment](t)(deps.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl("example.com/web:v2")}}, metav1.CreateOptions{}))

	rc, err := kube.RESTConfig(kube.Target{Name: "w", Kubeconfig: c.Kubeconfig, Context: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	done := make(chan error, 1)
	go func() { done <- kube.Watch(ctx, rc, func() { calls.Add(1) }) }()
	// The informers' first lists: give them time; what they show calls nothing
	// of ours (other tests of the package may change their own objects).
	time.Sleep(2 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("Watch returned early: %v", err)
	default:
	}
	expect := func(what string, do func()) {
		t.Helper()
		before := calls.Load()
		do()
		deadline := time.Now().Add(10 * time.Second)
		for calls.Load() == before {
			if time.Now().After(deadline) {
				t.Fatalf("%s: changed not called within 10s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	expect("a rollback", func() {
		d := must[*appsv1.Deployment](t)(deps.Get(ctx, "web", metav1.GetOptions{}))
		d.Spec.Template = tmpl("example.com/web:v1")
		must[*appsv1.Deployment](t)(deps.Update(ctx, d, metav1.UpdateOptions{}))
	})
	expect("a static PV", func() {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-retained"}, Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "pd.csi.storage.gke.io", VolumeHandle: "projects/p/zones/z/disks/retained"}}}}
		must[*corev1.PersistentVolume](t)(c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}))
		t.Cleanup(func() {
			_ = c.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
	})
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
}
