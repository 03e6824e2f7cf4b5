package ec2_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

func regionsClient(t *testing.T, f *ec2fake.Server) *ec2.Regions {
	t.Helper()
	r, err := ec2.NewRegions(context.Background(), awsclient.Service{Account: ec2fake.DefaultAccount, Region: f.Region(), Endpoint: f.URL(), MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "")})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An account's regions are the ones enabled for it, in one call: a region
// it has not opted in to runs nothing.
func TestRegionsListsTheEnabledRegions(t *testing.T) {
	f := ec2fake.NewServer(ec2fake.Options{Region: "us-east-1"})
	defer f.Close()
	f.SetRegions(ec2fake.Region{Name: "us-west-2"}, ec2fake.Region{Name: "us-east-1"},
		ec2fake.Region{Name: "ap-east-1", OptInStatus: ec2fake.OptedIn}, ec2fake.Region{Name: "me-south-1", OptInStatus: ec2fake.NotOptedIn})
	r := regionsClient(t, f)
	l := r.List(context.Background())
	if !l.Complete || l.Scope != ec2fake.DefaultAccount || !slices.Equal(l.Regions, []string{"ap-east-1", "us-east-1", "us-west-2"}) {
		t.Fatalf("listing %+v, want the three enabled regions, sorted", l)
	}
	if n := f.Calls(ec2fake.ActionDescribeRegions); n != 1 || r.Calls() != 1 || l.Calls != 1 {
		t.Errorf("DescribeRegions calls: fake %d, client %d, listing %d; want 1", n, r.Calls(), l.Calls)
	}
}

// A denied DescribeRegions leaves the account's regions unknown, and says
// what to grant.
func TestRegionsDeniedIsIncomplete(t *testing.T) {
	f := ec2fake.NewServer(ec2fake.Options{Region: "us-east-1"})
	defer f.Close()
	f.FailNext(ec2fake.ActionDescribeRegions, ec2fake.CodeUnauthorizedOperation, 0)
	l := regionsClient(t, f).List(context.Background())
	if l.Complete || l.Regions != nil || !strings.Contains(l.Problem, "ec2:DescribeRegions") {
		t.Fatalf("listing %+v, want incomplete, naming ec2:DescribeRegions", l)
	}
}

// Under WithRegionsMemo the readers of one run share one DescribeRegions
// per account, however many ask at once.
func TestRegionsMemoListsOncePerRun(t *testing.T) {
	f := ec2fake.NewServer(ec2fake.Options{Region: "us-east-1"})
	defer f.Close()
	ctx := ec2.WithRegionsMemo(context.Background())
	a, b := regionsClient(t, f), regionsClient(t, f)
	var wg sync.WaitGroup
	calls := make([]int, 8)
	for i := range calls {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			l := c.List(ctx)
			if !l.Complete || !slices.Equal(l.Regions, []string{"us-east-1"}) {
				t.Errorf("listing %+v", l)
			}
			calls[i] = l.Calls
		})
	}
	wg.Wait()
	if n := f.Calls(ec2fake.ActionDescribeRegions); n != 1 {
		t.Errorf("DescribeRegions: %d calls, want 1", n)
	}
	total := 0
	for _, n := range calls {
		total += n
	}
	if total != 1 {
		t.Errorf("the listings count %d calls, want 1", total)
	}
	regionsClient(t, f).List(context.Background())
	if n := f.Calls(ec2fake.ActionDescribeRegions); n != 2 {
		t.Errorf("another run: %d calls in all, want 2", n)
	}
}
