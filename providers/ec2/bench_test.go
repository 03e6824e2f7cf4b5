package ec2_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

// BenchmarkList lists 8 Fargate subnets holding 10,000 network interfaces
// through a fake with 1 ms per call whose describe bucket is EC2's (20 a
// second, burst 100), with the client's defaults under it. It reports API
// calls made against the minimum — 1 DescribeSubnets and ceil(10000/1000)
// DescribeNetworkInterfaces — and how many calls were throttled.
func BenchmarkList(b *testing.B) {
	const subnets, ifaces = 8, 10000
	f := newFake(b, ec2fake.Options{Latency: time.Millisecond, Describe: ec2fake.RateLimit{PerSecond: 20, Burst: 100}})
	seedInterfaces(f, seedSubnets(f, subnets), ifaces)
	minCalls := 1 + (ifaces+ec2.MaxPageSize-1)/ec2.MaxPageSize
	c := newClient(b, f.URL(), func(o *ec2.Options) {
		o.RequestsPerSecond, o.Burst, o.MaxAttempts = ec2.DefaultRequestsPerSecond, ec2.DefaultBurst, ec2.DefaultMaxAttempts
	})
	f.ResetCalls()
	b.ResetTimer()
	for b.Loop() {
		l := c.List(ctx)
		if !l.Complete || len(l.Interfaces) != ifaces {
			b.Fatalf("complete=%v %d interfaces %q", l.Complete, len(l.Interfaces), l.Problem)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(f.TotalCalls())/float64(b.N), "api_calls/op")
	b.ReportMetric(float64(minCalls), "min_calls/op")
	b.ReportMetric(float64(c.Throttled())/float64(b.N), "throttled/op")
}
