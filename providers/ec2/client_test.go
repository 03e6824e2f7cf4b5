package ec2_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/time/rate"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

// The documented example account ids only.
const (
	acct  = "123456789012"
	acct2 = "012345678910"
)

var ctx = context.Background()

func newFake(t testing.TB, o ec2fake.Options) *ec2fake.Server {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	s := ec2fake.NewServer(o)
	t.Cleanup(func() {
		if n := s.Calls(ec2fake.ActionUnknown); n > 0 {
			t.Errorf("the client made %d requests the fake has no route for", n)
		}
	})
	t.Cleanup(s.Close)
	return s
}

func options(endpoint string, mod ...func(*ec2.Options)) ec2.Options {
	o := ec2.Options{
		Service: awsclient.Service{
			Account:           acct,
			Region:            "us-east-1",
			Endpoint:          endpoint,
			Credentials:       credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
			RequestsPerSecond: 1000,
			Burst:             1000,
			MaxAttempts:       3,
			MaxBackoff:        5 * time.Millisecond,
			HTTPClient:        noKeepAlive,
		},
		SubnetTags:       map[string]string{"reclaim/fargate": "true"},
		DeletesPerSecond: 1000,
		DeleteBurst:      1000,
	}
	for _, m := range mod {
		m(&o)
	}
	return o
}

func newClient(t testing.TB, endpoint string, mod ...func(*ec2.Options)) *ec2.Client {
	t.Helper()
	c, err := ec2.New(ctx, options(endpoint, mod...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var fargateTags = map[string]string{"reclaim/fargate": "true"}

// seedSubnets adds n /20 subnets tagged for reclaim (subnet-0000000a, …) and
// one untagged subnet that must never be listed.
func seedSubnets(f *ec2fake.Server, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("subnet-%08x", 10+i)
		f.AddSubnet(ec2fake.Subnet{ID: id, CIDR: fmt.Sprintf("10.%d.0.0/20", i), AZ: fmt.Sprintf("us-east-1%c", 'a'+i),
			VPC: "vpc-0example", Tags: map[string]string{"reclaim/fargate": "true", "Name": fmt.Sprintf("fargate-%c", 'a'+i)}})
		ids = append(ids, id)
	}
	f.AddSubnet(ec2fake.Subnet{ID: "subnet-000000ff", CIDR: "10.200.0.0/24", Tags: map[string]string{"Name": "other"}})
	f.AddInterface(ec2fake.Interface{Subnet: "subnet-000000ff", Description: "not in scope"})
	return ids
}

// seedInterfaces spreads n detached interfaces over subnets.
func seedInterfaces(f *ec2fake.Server, subnets []string, n int) {
	ins := make([]ec2fake.Interface, n)
	for i := range ins {
		ins[i] = ec2fake.Interface{Subnet: subnets[i%len(subnets)], Description: fmt.Sprintf("pod %d", i)}
	}
	f.AddInterfaces(ins...)
}

func TestListPaginatesAtTheMinimumAndIncludesManaged(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 3)
	seedInterfaces(f, subnets, 2499)
	managed := f.AddInterface(ec2fake.Interface{Subnet: subnets[1], Description: "Amazon EKS fargate", Instance: "i-0123456789abcdef0",
		OperatorManaged: true, OperatorPrincipal: "eks.amazonaws.com", RequesterManaged: true, RequesterID: "AROAEXAMPLE:AmazonEKS"})
	f.ResetCalls()

	c := newClient(t, f.URL())
	l := c.List(ctx)
	if !l.Complete || l.Problem != "" || l.Account != acct || l.Region != "us-east-1" {
		t.Fatalf("listing: complete=%v problem=%q", l.Complete, l.Problem)
	}
	if len(l.Subnets) != 3 {
		t.Fatalf("got %d subnets, want the 3 tagged ones", len(l.Subnets))
	}
	for _, s := range l.Subnets {
		if s.Usable != 4091 {
			t.Errorf("%s %s: usable %d, want 2^(32-20)-5 = 4091", s.ID, s.CIDR, s.Usable)
		}
		if !strings.HasPrefix(s.Name, "fargate-") || s.VPC != "vpc-0example" || s.Account != acct || s.Region != "us-east-1" {
			t.Errorf("subnet %+v", s)
		}
		held := 0
		for _, ni := range l.Interfaces {
			if ni.Subnet == s.ID {
				held += len(ni.IPs)
			}
		}
		if s.Available != s.Usable-held {
			t.Errorf("%s: available %d, want %d usable - %d held", s.ID, s.Available, s.Usable, held)
		}
	}
	if len(l.Interfaces) != 2500 {
		t.Fatalf("got %d interfaces, want 2500", len(l.Interfaces))
	}
	seen := map[string]bool{}
	var got *inventory.NetInterface
	for i, ni := range l.Interfaces {
		if seen[ni.ID] {
			t.Fatalf("interface %s listed twice", ni.ID)
		}
		seen[ni.ID] = true
		if ni.Subnet == "subnet-000000ff" {
			t.Fatalf("interface %s of an out-of-scope subnet listed", ni.ID)
		}
		if ni.ID == managed {
			got = &l.Interfaces[i]
		}
	}
	if got == nil {
		t.Fatal("the operator-managed interface is missing: IncludeManagedResources was not sent")
	}
	if !got.OperatorManaged || got.OperatorPrincipal != "eks.amazonaws.com" || got.Instance != "i-0123456789abcdef0" || !got.RequesterManaged {
		t.Errorf("managed interface: %+v", *got)
	}

	wantCalls := map[string]int{ec2fake.ActionDescribeSubnets: 1, ec2fake.ActionDescribeNetworkInterfaces: 3} // ceil(2500/1000)
	if calls := f.CallCounts(); !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("fake saw %v, want exactly %v", calls, wantCalls)
	}
	if calls := c.Calls(); !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("client counted %v, want %v", calls, wantCalls)
	}
	if c.Throttled() != 0 || f.MutatingCalls() != 0 {
		t.Errorf("throttled %d, mutating %d", c.Throttled(), f.MutatingCalls())
	}
}

func TestConvertInterface(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 1)
	id := f.AddInterface(ec2fake.Interface{
		ID: "eni-0a1b2c3d4e5f60718", Subnet: subnets[0], Description: "aws-K8S-i-0123456789abcdef0",
		Type: "branch", RequesterManaged: true, RequesterID: "AROAEXAMPLE:vpc-resource-controller",
		Tags:     map[string]string{"eks:eni:owner": "eks-vpc-resource-controller", "Name": "x"},
		IPs:      []string{"10.0.0.10", "10.0.0.11", "10.0.0.12"},
		Prefixes: []string{"10.0.1.0/28", "10.0.1.16/28"},
		Instance: "i-0123456789abcdef0",
	})
	c := newClient(t, f.URL())
	got, err := c.Interfaces(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.NetInterface{{
		ID: id, Subnet: subnets[0], VPC: "vpc-0example", AZ: "us-east-1a", Description: "aws-K8S-i-0123456789abcdef0",
		Status: "in-use", Type: "branch", RequesterManaged: true, RequesterID: "AROAEXAMPLE:vpc-resource-controller",
		Tags: map[string]string{"eks:eni:owner": "eks-vpc-resource-controller", "Name": "x"},
		IPs:  []string{"10.0.0.10", "10.0.0.11", "10.0.0.12"}, Prefixes: 2, Instance: "i-0123456789abcdef0",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	l := c.List(ctx)
	if s := l.Subnets[0]; s.Available != 4091-3-32 {
		t.Errorf("available %d, want 4091 - 3 addresses - 2 /28 prefixes", s.Available)
	}
}

func TestSubnetsByID(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 3)
	seedInterfaces(f, subnets, 30)

	t.Run("all present: one call by SubnetIds", func(t *testing.T) {
		f.ResetCalls()
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.Subnets, o.SubnetTags = subnets[:2], nil })
		l := c.List(ctx)
		if !l.Complete || len(l.Subnets) != 2 || len(l.Interfaces) != 20 {
			t.Fatalf("complete=%v %d subnets %d interfaces %q", l.Complete, len(l.Subnets), len(l.Interfaces), l.Problem)
		}
		if n := f.Calls(ec2fake.ActionDescribeSubnets); n < 1 || n > 1+transportRetry {
			t.Errorf("%d DescribeSubnets calls, want 1", n)
		}
	})
	t.Run("one missing: incomplete, the others listed", func(t *testing.T) {
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.Subnets, o.SubnetTags = []string{subnets[0], "subnet-0deadbeef"}, nil })
		l := c.List(ctx)
		if l.Complete {
			t.Fatal("a configured subnet that does not exist left the listing complete")
		}
		if !strings.Contains(l.Problem, "subnet-0deadbeef") || !strings.Contains(l.Problem, "do not exist") {
			t.Errorf("problem %q does not name the missing subnet", l.Problem)
		}
		if len(l.Subnets) != 1 || l.Subnets[0].ID != subnets[0] || len(l.Interfaces) != 10 {
			t.Errorf("%d subnets, %d interfaces: the subnet that exists must still be listed", len(l.Subnets), len(l.Interfaces))
		}
	})
	t.Run("ids and tags: a listed subnet without the tags is missing", func(t *testing.T) {
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.Subnets = []string{subnets[0], "subnet-000000ff"} })
		l := c.List(ctx)
		if l.Complete || !strings.Contains(l.Problem, "subnet-000000ff") || !strings.Contains(l.Problem, "reclaim/fargate=true") {
			t.Errorf("complete=%v problem %q", l.Complete, l.Problem)
		}
	})
	t.Run("no subnet carries the tags", func(t *testing.T) {
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.SubnetTags = map[string]string{"team": "nobody"} })
		l := c.List(ctx)
		if len(l.Subnets) != 0 || !strings.Contains(l.Problem, "team=nobody") {
			t.Errorf("%d subnets, problem %q", len(l.Subnets), l.Problem)
		}
	})
}

func TestThrottledCallsAreRetried(t *testing.T) {
	// The adaptive mode slows to its floor (0.5 attempts a second) after a
	// throttle early in a client's life, so each subtest takes seconds: run
	// them in parallel.
	t.Run("injected", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, ec2fake.Options{})
		seedInterfaces(f, seedSubnets(f, 2), 1500)
		f.FailNext(ec2fake.ActionDescribeNetworkInterfaces, ec2fake.CodeRequestLimitExceeded, 1)
		f.ResetCalls()
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.MaxAttempts = 5 })
		l := c.List(ctx)
		if !l.Complete || len(l.Interfaces) != 1500 {
			t.Fatalf("complete=%v %d interfaces %q", l.Complete, len(l.Interfaces), l.Problem)
		}
		if n := f.Calls(ec2fake.ActionDescribeNetworkInterfaces); n < 2+1 || n > 2+1+transportRetry {
			t.Errorf("%d DescribeNetworkInterfaces calls, want 2 pages + 1 retry", n)
		}
		if c.Throttled() != 1 || c.Calls()[ec2.OpDescribeNetworkInterfaces] != 3 {
			t.Errorf("client: throttled %d, calls %v", c.Throttled(), c.Calls())
		}
	})
	t.Run("token bucket", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, ec2fake.Options{Describe: ec2fake.RateLimit{PerSecond: 5, Burst: 1}})
		seedInterfaces(f, seedSubnets(f, 2), 12)
		c := newClient(t, f.URL(), func(o *ec2.Options) { o.PageSize, o.MaxAttempts = 5, 30 })
		l := c.List(ctx)
		if !l.Complete || len(l.Interfaces) != 12 {
			t.Fatalf("complete=%v %d interfaces %q", l.Complete, len(l.Interfaces), l.Problem)
		}
		if f.Throttled() == 0 || c.Throttled() != f.Throttled() {
			t.Errorf("fake throttled %d, client counted %d: the test did not exercise throttling", f.Throttled(), c.Throttled())
		}
	})
}

func TestFailedPageMakesListingIncomplete(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	seedInterfaces(f, seedSubnets(f, 3), 2500)
	f.FailPage(ec2fake.ActionDescribeNetworkInterfaces, 2, ec2fake.CodeInternalError, 0)
	f.ResetCalls()
	c := newClient(t, f.URL(), func(o *ec2.Options) { o.MaxAttempts = 3 })
	l := c.List(ctx)
	if l.Complete {
		t.Fatal("a failed page left the listing complete")
	}
	for _, want := range []string{"InternalError", "page 2", "1000 network interfaces seen", "failed after 3 attempts"} {
		if !strings.Contains(l.Problem, want) {
			t.Errorf("problem %q lacks %q", l.Problem, want)
		}
	}
	if len(l.Interfaces) != 1000 || len(l.Subnets) != 3 {
		t.Errorf("%d interfaces, %d subnets: what was seen must be kept", len(l.Interfaces), len(l.Subnets))
	}
	if n := f.Calls(ec2fake.ActionDescribeNetworkInterfaces); n < 1+3 || n > 1+3+transportRetry {
		t.Errorf("%d calls, want page 1 and 3 attempts at page 2", n)
	}
}

func TestUnauthorizedNamesThePermission(t *testing.T) {
	for _, action := range []string{ec2fake.ActionDescribeSubnets, ec2fake.ActionDescribeNetworkInterfaces} {
		t.Run(action, func(t *testing.T) {
			f := newFake(t, ec2fake.Options{})
			seedInterfaces(f, seedSubnets(f, 1), 3)
			f.FailNext(action, ec2fake.CodeUnauthorizedOperation, 1)
			f.ResetCalls()
			l := newClient(t, f.URL()).List(ctx)
			if l.Complete {
				t.Fatal("UnauthorizedOperation left the listing complete")
			}
			for _, want := range []string{"UnauthorizedOperation: You are not authorized", "; grant ec2:" + action, acct + "/us-east-1"} {
				if !strings.Contains(l.Problem, want) {
					t.Errorf("problem %q lacks %q", l.Problem, want)
				}
			}
			if n := f.Calls(action); n != 1 {
				t.Errorf("%d %s calls: an authorization failure must not be retried", n, action)
			}
		})
	}
}

func TestDeleteInterface(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 1)
	c := newClient(t, f.URL())

	free := f.AddInterface(ec2fake.Interface{Subnet: subnets[0]})
	if err := c.DeleteInterface(ctx, free); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if f.Has(free) {
		t.Fatal("the interface still exists")
	}

	err := c.DeleteInterface(ctx, free)
	if !errors.Is(err, outcome.ErrNotFound) || errors.Is(err, outcome.ErrInUse) {
		t.Errorf("second delete: %v, want outcome.ErrNotFound", err)
	}
	if !strings.Contains(fmt.Sprint(err), "InvalidNetworkInterfaceID.NotFound") {
		t.Errorf("error %q does not carry EC2's code", err)
	}

	attached := f.AddInterface(ec2fake.Interface{Subnet: subnets[0], Instance: "i-0123456789abcdef0"})
	err = c.DeleteInterface(ctx, attached)
	if !errors.Is(err, outcome.ErrInUse) || errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("delete attached: %v, want ErrInUse", err)
	}
	if !f.Has(attached) {
		t.Error("an attached interface was deleted")
	}

	// The casing trap: InvalidNetworkInterfaceId.Malformed is not NotFound.
	err = c.DeleteInterface(ctx, "eni-x")
	if err == nil || errors.Is(err, outcome.ErrNotFound) || errors.Is(err, outcome.ErrInUse) || !strings.Contains(err.Error(), "InvalidNetworkInterfaceId.Malformed") {
		t.Errorf("malformed id: %v", err)
	}

	// Each answer's delete outcome, which the engine decides on: EC2's
	// answers are outcomes, a server error after the retries is unknown.
	for _, c2 := range []struct {
		code string
		want outcome.Outcome
	}{
		{ec2fake.CodeInterfaceInUse, outcome.Changed},
		{ec2fake.CodeUnauthorizedOperation, outcome.Refused},
		{ec2fake.CodeInterfaceMalformed, outcome.Refused},
		{ec2fake.CodeInterfaceNotFound, outcome.Gone},
		{ec2fake.CodeInternalError, outcome.Unknown},
	} {
		f.FailNext(ec2fake.ActionDeleteNetworkInterface, c2.code, 0) // every attempt, retries too
		if got := outcome.Of(c.DeleteInterface(ctx, attached)); got != c2.want {
			t.Errorf("%s: outcome %v, want %v", c2.code, got, c2.want)
		}
		f.ClearFaults()
	}

	// EC2's other NotFound spelling.
	f.FailPageMessage(ec2fake.ActionDeleteNetworkInterface, 0, ec2fake.CodeInterfaceNotFoundAlt, "The specified network interface does not exist.", 1)
	if err := c.DeleteInterface(ctx, attached); !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("InvalidNetworkInterface.NotFound: %v, want outcome.ErrNotFound", err)
	}

	// A delete whose response is lost is retried and meets NotFound: gone.
	lost := f.AddInterface(ec2fake.Interface{Subnet: subnets[0]})
	f.LoseDeleteResponses(1)
	f.ResetCalls()
	if err := c.DeleteInterface(ctx, lost); !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("delete with a lost response: %v, want outcome.ErrNotFound after the retry", err)
	}
	if n := f.Calls(ec2fake.ActionDeleteNetworkInterface); f.Has(lost) || n < 2 || n > 2+transportRetry {
		t.Errorf("still there %v, %d calls", f.Has(lost), n)
	}
}

func TestLimiters(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 1)

	c, err := ec2.New(ctx, ec2.Options{
		Service: awsclient.Service{
			Account:     acct,
			Region:      "us-east-1",
			Endpoint:    f.URL(),
			Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		},
		SubnetTags: fargateTags,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, del := c.Limiters()
	if d.Limit() != 10 || d.Burst() != 20 || del.Limit() != 2 || del.Burst() != 5 {
		t.Errorf("defaults: describe %v/%d, delete %v/%d; want 10/20 and 2/5", d.Limit(), d.Burst(), del.Limit(), del.Burst())
	}

	// A delete bucket of 3 that refills once in ~17 minutes: the fourth
	// delete cannot get a token before its deadline and is never sent.
	c = newClient(t, f.URL(), func(o *ec2.Options) { o.DeletesPerSecond, o.DeleteBurst = 0.001, 3 })
	_, del = c.Limiters()
	if del.Limit() != rate.Limit(0.001) || del.Burst() != 3 {
		t.Fatalf("delete limiter %v/%d", del.Limit(), del.Burst())
	}
	ids := make([]string, 4)
	for i := range ids {
		ids[i] = f.AddInterface(ec2fake.Interface{Subnet: subnets[0]})
	}
	f.ResetCalls()
	for _, id := range ids[:3] {
		if err := c.DeleteInterface(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = c.DeleteInterface(short, ids[3])
	if err == nil || !strings.Contains(err.Error(), "client-side rate limit") {
		t.Errorf("fourth delete: %v, want the client-side rate limit", err)
	}
	if n := f.Calls(ec2fake.ActionDeleteNetworkInterface); n != 3 {
		t.Errorf("%d DeleteNetworkInterface calls reached EC2, want 3 (the bucket)", n)
	}
	// Listing draws on its own bucket.
	if l := c.List(ctx); !l.Complete {
		t.Errorf("list after the delete bucket ran dry: %q", l.Problem)
	}
}

func TestInterfacesReRead(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 2)
	a := f.AddInterface(ec2fake.Interface{Subnet: subnets[0]})
	b := f.AddInterface(ec2fake.Interface{Subnet: subnets[1], OperatorManaged: true, OperatorPrincipal: "eks.amazonaws.com"})
	gone := f.AddInterface(ec2fake.Interface{Subnet: subnets[0]})
	f.RemoveInterface(gone)
	fl, err := ec2.NewFleet(ctx, []ec2.Options{options(f.URL())})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fl.Interfaces(ctx, acct, "us-east-1", []string{a, gone, b, a})
	if err != nil {
		t.Fatalf("one gone id must not fail the re-read: %v", err)
	}
	var ids []string
	for _, ni := range got {
		ids = append(ids, ni.ID)
	}
	if !reflect.DeepEqual(ids, []string{a, b}) {
		t.Errorf("got %v, want %v (the gone one absent, the managed one present)", ids, []string{a, b})
	}
	if got, err := fl.Interfaces(ctx, acct, "us-east-1", []string{gone}); err != nil || len(got) != 0 {
		t.Errorf("only gone: %v %v", got, err)
	}
	if _, err := fl.Interfaces(ctx, acct2, "us-east-1", []string{a}); err == nil {
		t.Error("an account that is not configured must be an error")
	}
	if err := fl.DeleteInterface(ctx, acct, "eu-west-1", a); err == nil {
		t.Error("a region that is not configured must be an error")
	}
}

func TestFleet(t *testing.T) {
	f1 := newFake(t, ec2fake.Options{Region: "us-east-1", Latency: 20 * time.Millisecond})
	seedInterfaces(f1, seedSubnets(f1, 1), 5)
	f2 := newFake(t, ec2fake.Options{Region: "eu-west-1", Account: acct2, Latency: 20 * time.Millisecond})
	seedInterfaces(f2, seedSubnets(f2, 2), 7)
	f2.FailNext(ec2fake.ActionDescribeSubnets, ec2fake.CodeUnauthorizedOperation, 1)

	fl, err := ec2.NewFleet(ctx, []ec2.Options{
		options(f1.URL()),
		options(f2.URL(), func(o *ec2.Options) { o.Account, o.Region = acct2, "eu-west-1" }),
	})
	if err != nil {
		t.Fatal(err)
	}
	ls := fl.List(ctx)
	if len(ls) != 2 || ls[0].Account != acct || ls[1].Account != acct2 || ls[1].Region != "eu-west-1" {
		t.Fatalf("listings %+v", ls)
	}
	if !ls[0].Complete || len(ls[0].Interfaces) != 5 {
		t.Errorf("first: complete=%v %d interfaces", ls[0].Complete, len(ls[0].Interfaces))
	}
	if ls[1].Complete || !strings.Contains(ls[1].Problem, "grant ec2:DescribeSubnets") {
		t.Errorf("second must be incomplete: %q", ls[1].Problem)
	}
	if calls := fl.Calls(); calls[ec2.OpDescribeSubnets] != 2 || calls[ec2.OpDescribeNetworkInterfaces] != 1 {
		t.Errorf("fleet calls %v", calls)
	}
}

func TestNewFleetReportsEveryProblem(t *testing.T) {
	_, err := ec2.NewFleet(ctx, []ec2.Options{
		{Service: awsclient.Service{Account: "12345", Region: "us-east-1"}, SubnetTags: fargateTags},
		{Service: awsclient.Service{Account: acct, Region: "us-east-1"}},
		{Service: awsclient.Service{Account: acct2, Region: "us-east-1", ExternalID: "x"}, Subnets: []string{"sn-1"}, PageSize: 3},
		options(""),
		options(""),
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`ec2 0:`, `account "12345": want a 12-digit`,
		`ec2 1:`, `subnets or subnetTags is required`,
		`ec2 2:`, `subnets[0] "sn-1"`, `pageSize 3: EC2 allows 5..1000`, `externalID is set without roleARN`,
		`ec2 4: ` + acct + `/us-east-1 is configured twice`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// transportRetry is the one extra call the SDK may make when Go's transport
// dropped an idle connection it was about to reuse (aws/aws-sdk-go-v2#2737):
// counts that would otherwise be exact allow it.
const transportRetry = 1

// noKeepAlive sends every request on a new connection: exact call counts and
// results of non-idempotent calls must not depend on the SDK repeating one
// after Go's transport dropped an idle connection it was about to reuse
// (aws/aws-sdk-go-v2#2737), which a loaded CI machine makes likely.
var noKeepAlive = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })
