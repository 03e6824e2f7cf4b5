package ecr_test

import (
	"fmt"
	"testing"
	"time"

	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
)

// BenchmarkList lists 50 repositories × 2,000 images (20 of them multi-arch
// indexes per repository) through a fake with 1 ms per call that allows 100
// calls a second of each API (burst 10), as ECR's quotas are per action,
// with the client's limiters 10% under it. It reports API calls made against
// the minimum — 1 DescribeRepositories and 1 GetRegistryPolicy, per
// repository ceil(2000/1000) DescribeImages, ceil(20/100) BatchGetImage and
// 1 GetRepositoryPolicy — and how many calls the fake throttled.
func BenchmarkList(b *testing.B) {
	const repos, perRepo, indexes = 50, 2000, 20
	const rps = 100
	rl := ecrfake.RateLimit{PerSecond: rps, Burst: 10}
	f := newFake(b, ecrfake.Options{
		Latency: time.Millisecond,
		Rates: map[string]ecrfake.RateLimit{ecrfake.OpDescribeRepositories: rl, ecrfake.OpDescribeImages: rl, ecrfake.OpBatchGetImage: rl,
			ecrfake.OpGetRepositoryPolicy: rl, ecrfake.OpGetRegistryPolicy: rl},
	})
	for r := range repos {
		name := fmt.Sprintf("team-%02d/app", r)
		f.AddRepository(acct, name, t0, nil)
		imgs := make([]ecrfake.Image, 0, perRepo)
		for i := range perRepo - 3*indexes {
			imgs = append(imgs, ecrfake.Image{Digest: ecrfake.Digest(fmt.Sprintf("%d/%d", r, i)),
				PushedAt: t0.Add(time.Duration(i) * time.Minute), SizeBytes: 1 << 20})
		}
		for i := range indexes {
			a, c := ecrfake.NewManifest(fmt.Sprintf("%d/amd64/%d", r, i), t0), ecrfake.NewManifest(fmt.Sprintf("%d/arm64/%d", r, i), t0)
			imgs = append(imgs, a, c, ecrfake.NewIndex(t0.Add(time.Second), []string{a.Digest, c.Digest}, fmt.Sprintf("v%d", i)))
		}
		f.AddImages(acct, name, imgs)
	}
	minCalls := 2 + repos*((perRepo+ecr.MaxPageSize-1)/ecr.MaxPageSize+(indexes+ecr.MaxBatch-1)/ecr.MaxBatch+1)
	c := newClient(b, f.URL(), func(o *ecr.Options) {
		o.RequestsPerSecond, o.Burst, o.MaxAttempts, o.MaxBackoff = 0.9*rps, 9, 10, 0
	})
	f.ResetCalls()
	b.ResetTimer()
	for b.Loop() {
		l := c.ListAll(ctx)
		if !l.Complete || len(l.Repos) != repos {
			b.Fatalf("registry complete=%v %d repos %q", l.Complete, len(l.Repos), l.Problem)
		}
		for _, r := range l.Repos {
			if !r.Complete || r.Images.Len() != perRepo {
				b.Fatalf("%s: complete=%v %d images %q", r.Repo.Name, r.Complete, r.Images.Len(), r.Problem)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(f.TotalCalls())/float64(b.N), "api_calls/op")
	b.ReportMetric(float64(minCalls), "min_calls/op")
	b.ReportMetric(float64(f.Throttled())/float64(b.N), "throttled/op")
	b.ReportMetric(float64(repos*perRepo), "images")
}
