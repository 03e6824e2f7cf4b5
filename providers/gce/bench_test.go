package gce_test

import (
	"fmt"
	"testing"
	"time"

	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gce/gcefake"
)

// BenchmarkListDisks lists 10 projects × 20 zones (+ a regional scope) holding
// 6,300 disks through a fake with 2 ms per call, and reports API calls made
// against the minimum, ceil(disks/500) pages per project.
func BenchmarkListDisks(b *testing.B) {
	const projects, zones, perZone, regional = 10, 20, 30, 30
	f := newFake(b, gcefake.Options{Latency: 2 * time.Millisecond})
	minCalls := 0
	total := 0
	for p := range projects {
		project := fmt.Sprintf("proj-%02d", p)
		n := 0
		for z := range zones {
			for i := range perZone {
				f.AddDisk(project, gcefake.Disk{Zone: fmt.Sprintf("region%d-%c", z/3, 'a'+z%3), Name: fmt.Sprintf("pvc-%d-%d", z, i), SizeGB: 10})
				n++
			}
		}
		for i := range regional {
			f.AddDisk(project, gcefake.Disk{Region: "region0", Name: fmt.Sprintf("rpd-%d", i), SizeGB: 10})
			n++
		}
		minCalls += (n + gce.DefaultPageSize - 1) / gce.DefaultPageSize
		total += n
	}
	c := newClient(b, f.URL())
	f.ResetCalls()
	b.ResetTimer()
	for b.Loop() {
		for p := range projects {
			l, err := c.ListDisks(ctx, fmt.Sprintf("proj-%02d", p))
			if err != nil || !l.Complete {
				b.Fatalf("ListDisks: %v %q", err, l.Problem)
			}
			if len(l.Disks) != total/projects {
				b.Fatalf("got %d disks, want %d", len(l.Disks), total/projects)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(f.TotalCalls())/float64(b.N), "api_calls/op")
	b.ReportMetric(float64(minCalls), "min_calls/op")
	b.ReportMetric(float64(total), "disks")
}
