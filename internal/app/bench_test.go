package app_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/state"
)

// BenchmarkRunFleet is one dry-run pass over a fleet: 8 projects, 4 regions of
// 3 zones each, 750 disks per project (6,000 in all), half of them referenced by
// PVs of two clusters, with 5ms of latency on every GCE call. It reports the
// API calls made against the minimum needed: one aggregatedList page per 500
// disks per project, one regions.get per project and region with disks.
func BenchmarkRunFleet(b *testing.B) {
	const (
		projects       = 8
		regions        = 4
		zonesPerRegion = 3
		perProject     = 750
		latency        = 5 * time.Millisecond
	)
	srv := gcefake.New(gcefake.Options{Latency: latency})
	defer srv.Close()
	var objs [2][]runtime.Object
	var names []string
	now := time.Now()
	for p := 0; p < projects; p++ {
		proj := fmt.Sprintf("bench-project-%d", p)
		names = append(names, proj)
		for r := 0; r < regions; r++ {
			srv.SetQuota(proj, fmt.Sprintf("bench-region%d", r), "SSD_TOTAL_GB", 100000, 50000)
		}
		for i := 0; i < perProject; i++ {
			zone := fmt.Sprintf("bench-region%d-%c", i%regions, 'a'+rune(i/regions%zonesPerRegion))
			name := fmt.Sprintf("pvc-%d-%d", p, i)
			key := srv.AddDisk(proj, gcefake.Disk{Zone: zone, Name: name, SizeGB: 10, Type: "pd-balanced",
				Labels: map[string]string{"goog-gke-volume": ""}, Created: now.Add(-48 * time.Hour)})
			if i%2 == 0 {
				objs[i%4/2] = append(objs[i%4/2], &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
						CSI: &corev1.CSIPersistentVolumeSource{Driver: "pd.csi.storage.gke.io", VolumeHandle: key}}}})
			}
		}
	}
	yaml := fmt.Sprintf("clusters:\n  - name: a\n    context: a\n  - name: b\n    context: b\ngce:\n  projects: [%s]\n  concurrency: 8\n", strings.Join(names, ", "))
	cfg, err := config.Parse([]byte(yaml), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	disks, err := gce.New(context.Background(), gce.Options{Endpoint: srv.URL(), WithoutAuthentication: true})
	if err != nil {
		b.Fatal(err)
	}
	defer disks.Close()
	clusters := func(ctx context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{
			kube.Collect(ctx, "a", fake.NewSimpleClientset(objs[0]...), nil, kube.Options{}),
			kube.Collect(ctx, "b", fake.NewSimpleClientset(objs[1]...), nil, kube.Options{}),
		}
	}
	minCalls := projects * ((perProject+499)/500 + regions)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		srv.ResetCalls()
		start, cpu := time.Now(), testenv.CPUTime()
		rep, err := app.Run(context.Background(), cfg, app.Deps{Clients: map[string]any{gcepd.Read: disks}, Clusters: clusters,
			Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard)}, app.Options{})
		if err != nil {
			b.Fatal(err)
		}
		wall, cpu := time.Since(start), testenv.CPUTime()-cpu
		if n := rep.Plan.Len(); n != projects*perProject {
			b.Fatalf("%d decisions, want %d", n, projects*perProject)
		}
		calls := srv.TotalCalls()
		b.ReportMetric(float64(calls), "api-calls/op")
		b.ReportMetric(float64(minCalls), "min-calls/op")
		b.ReportMetric(float64(wall.Milliseconds()), "wall-ms/op")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
		b.Logf("%d disks in %d projects: wall %s, %d API calls (minimum %d): %v", projects*perProject, projects, wall.Round(time.Millisecond), calls, minCalls, srv.CallCounts())
	}
}
