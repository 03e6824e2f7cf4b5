package ec2fake_test

import (
	"context"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

const auth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240301/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=x"

func newFake(t *testing.T, o ec2fake.Options) *ec2fake.Server {
	t.Helper()
	o.Logf = t.Logf
	f := ec2fake.NewServer(o)
	t.Cleanup(f.Close)
	f.AddSubnet(ec2fake.Subnet{ID: "subnet-0000000a", CIDR: "10.0.0.0/24", Tags: map[string]string{"team": "a"}})
	f.AddSubnet(ec2fake.Subnet{ID: "subnet-0000000b", CIDR: "10.0.1.0/24", Tags: map[string]string{"team": "b"}})
	return f
}

// do sends a raw Query request and returns the status, the error code (or
// "") and the body.
func do(t *testing.T, f *ec2fake.Server, authz, form string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code := ""
	if m := regexp.MustCompile(`<Code>([^<]*)</Code>`).FindSubmatch(b); m != nil {
		code = string(m[1])
	}
	return resp.StatusCode, code, string(b)
}

// transportRetry is the one repeat the SDK may make of a call whose
// connection Go's transport closed (see sdk).
const transportRetry = 1

func sdk(f *ec2fake.Server) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(f.URL()),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		// Two attempts: Go's transport can close a connection under a
		// response being read even without keep-alives (seen on a loaded CI
		// machine, aws/aws-sdk-go-v2#2737); the SDK retries net.ErrClosed
		// since #2949. Call counts allow that one repeat (transportRetry).
		RetryMaxAttempts: 2,
		// A new connection per request: no idle connection to drop.
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true }),
	})
}

func TestProtocolErrors(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	f.AddInterface(ec2fake.Interface{ID: "eni-00000000000000001", Subnet: "subnet-0000000a"})
	for _, c := range []struct {
		name, authz, form string
		status            int
		code              string
	}{
		{"unsigned", "", "Action=DescribeSubnets&Version=2016-11-15", 401, "AuthFailure"},
		{"other service", strings.Replace(auth, "/ec2/", "/ecr/", 1), "Action=DescribeSubnets&Version=2016-11-15", 401, "AuthFailure"},
		{"no version", auth, "Action=DescribeSubnets", 400, "MissingParameter"},
		{"old version", auth, "Action=DescribeSubnets&Version=2014-06-15", 400, "NoSuchVersion"},
		{"unknown action", auth, "Action=RunInstances&Version=2016-11-15", 400, "InvalidAction"},
		{"page too small", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&MaxResults=4", 400, "InvalidParameterValue"},
		{"page too large", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&MaxResults=1001", 400, "InvalidParameterValue"},
		{"ids with a page size", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&MaxResults=5&NetworkInterfaceId.1=eni-00000000000000001", 400, "InvalidParameterCombination"},
		{"one id missing", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&NetworkInterfaceId.1=eni-00000000000000001&NetworkInterfaceId.2=eni-0000000000000dead", 400, "InvalidNetworkInterfaceID.NotFound"},
		{"malformed id", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&NetworkInterfaceId.1=to-set", 400, "InvalidNetworkInterfaceId.Malformed"},
		{"unknown filter", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&Filter.1.Name=colour&Filter.1.Value.1=red", 400, "InvalidParameterValue"},
		{"bad token", auth, "Action=DescribeNetworkInterfaces&Version=2016-11-15&NextToken=garbage", 400, "InvalidNextToken"},
		{"missing subnet", auth, "Action=DescribeSubnets&Version=2016-11-15&SubnetId.1=subnet-0000000a&SubnetId.2=subnet-0deadbeef", 400, "InvalidSubnetID.NotFound"},
		{"dry run", auth, "Action=DeleteNetworkInterface&Version=2016-11-15&NetworkInterfaceId=eni-00000000000000001&DryRun=true", 412, "DryRunOperation"},
		{"delete without id", auth, "Action=DeleteNetworkInterface&Version=2016-11-15", 400, "MissingParameter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, code, body := do(t, f, c.authz, c.form)
			if status != c.status || code != c.code {
				t.Errorf("got %d %s, want %d %s\n%s", status, code, c.status, c.code, body)
			}
			if !strings.Contains(body, "<RequestID>") || strings.Contains(body, "xmlns") {
				t.Errorf("error body not in EC2's shape: %s", body)
			}
		})
	}
	if !f.Has("eni-00000000000000001") {
		t.Error("a dry run deleted")
	}
	if n := f.Calls(ec2fake.ActionUnknown); n != 1 {
		t.Errorf("%d unknown requests counted, want 1", n)
	}
}

func TestPagingAndManagedResources(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	for range 11 {
		f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000a"})
	}
	managed := f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000a", OperatorManaged: true, OperatorPrincipal: "eks.amazonaws.com"})
	f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000b"})
	c := sdk(f)

	list := func(include bool) []string {
		p := ec2.NewDescribeNetworkInterfacesPaginator(c, &ec2.DescribeNetworkInterfacesInput{
			Filters:                 []types.Filter{{Name: aws.String("subnet-id"), Values: []string{"subnet-0000000a"}}},
			MaxResults:              aws.Int32(5),
			IncludeManagedResources: aws.Bool(include),
		})
		var ids []string
		for p.HasMorePages() {
			out, err := p.NextPage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range out.NetworkInterfaces {
				ids = append(ids, aws.ToString(n.NetworkInterfaceId))
			}
		}
		return ids
	}
	f.ResetCalls()
	all := list(true)
	if n := f.Calls(ec2fake.ActionDescribeNetworkInterfaces); len(all) != 12 || n < 3 || n > 3+transportRetry {
		t.Errorf("with managed: %d interfaces in %d calls, want 12 in 3", len(all), n)
	}
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Errorf("%s on two pages", id)
		}
		seen[id] = true
	}
	if !seen[managed] {
		t.Error("IncludeManagedResources=true did not list the managed interface")
	}
	hidden := list(false)
	if len(hidden) != 11 || strings.Contains(strings.Join(hidden, ","), managed) {
		t.Errorf("without the flag (the 2026 default) the managed interface must be hidden: %d listed", len(hidden))
	}

	// The filter leaves a missing id out instead of failing.
	out, err := c.DescribeNetworkInterfaces(context.Background(), &ec2.DescribeNetworkInterfacesInput{
		Filters:                 []types.Filter{{Name: aws.String("network-interface-id"), Values: []string{all[0], "eni-0000000000000dead"}}},
		IncludeManagedResources: aws.Bool(true),
	})
	if err != nil || len(out.NetworkInterfaces) != 1 {
		t.Errorf("filter by id: %v, %d", err, len(out.NetworkInterfaces))
	}
	// Status filter.
	f.Attach(all[1], "i-0123456789abcdef0")
	out, err = c.DescribeNetworkInterfaces(context.Background(), &ec2.DescribeNetworkInterfacesInput{
		Filters: []types.Filter{{Name: aws.String("status"), Values: []string{"in-use"}}},
	})
	if err != nil || len(out.NetworkInterfaces) != 1 || aws.ToString(out.NetworkInterfaces[0].NetworkInterfaceId) != all[1] {
		t.Errorf("status filter: %v %v", err, out)
	}
	// Subnets by tag, with the computed free count.
	sn, err := c.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{
		Filters: []types.Filter{{Name: aws.String("tag:team"), Values: []string{"a"}}}, MaxResults: aws.Int32(5)})
	if err != nil || len(sn.Subnets) != 1 || aws.ToInt32(sn.Subnets[0].AvailableIpAddressCount) != 251-12 {
		t.Errorf("subnets by tag: %v %+v", err, sn)
	}
}

func TestDeleteAndThrottling(t *testing.T) {
	f := newFake(t, ec2fake.Options{Describe: ec2fake.RateLimit{PerSecond: 0.001, Burst: 1}})
	free := f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000a"})
	attached := f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000a", Instance: "i-0123456789abcdef0"})
	del := "Action=DeleteNetworkInterface&Version=2016-11-15&NetworkInterfaceId="

	if status, code, body := do(t, f, auth, del+attached); status != 400 || code != ec2fake.CodeInterfaceInUse {
		t.Errorf("attached: %d %s", status, body)
	}
	if status, _, body := do(t, f, auth, del+free); status != 200 || !strings.Contains(body, "<return>true</return>") ||
		!strings.Contains(body, `xmlns="`+ec2fake.Namespace+`"`) || !strings.Contains(body, "<requestId>") {
		t.Errorf("delete: %d %s", status, body)
	}
	if status, code, body := do(t, f, auth, del+free); status != 400 || code != ec2fake.CodeInterfaceNotFound ||
		!strings.Contains(body, "The networkInterface ID &#39;"+free+"&#39; does not exist") && !strings.Contains(body, "The networkInterface ID '"+free+"' does not exist") {
		t.Errorf("second delete: %d %s", status, body)
	}
	if f.MutatingCalls() != 3 {
		t.Errorf("mutating calls %d", f.MutatingCalls())
	}

	// The describe bucket holds one token; deletes have their own (none here).
	desc := "Action=DescribeSubnets&Version=2016-11-15"
	if status, _, _ := do(t, f, auth, desc); status != 200 {
		t.Fatal("first describe throttled")
	}
	if status, code, _ := do(t, f, auth, desc); status != 503 || code != ec2fake.CodeRequestLimitExceeded {
		t.Errorf("second describe: %d %s, want 503 RequestLimitExceeded", status, code)
	}
	if f.Throttled() != 1 {
		t.Errorf("throttled %d", f.Throttled())
	}

	// A page fault fires on its page only, the given number of times.
	f.SetRate(ec2fake.ClassDescribe, ec2fake.RateLimit{})
	f.FailPage(ec2fake.ActionDescribeSubnets, 1, ec2fake.CodeUnauthorizedOperation, 1)
	if status, code, body := do(t, f, auth, desc); status != 403 || code != ec2fake.CodeUnauthorizedOperation || !strings.Contains(body, "ec2:DescribeSubnets") {
		t.Errorf("fault: %d %s", status, body)
	}
	if status, _, _ := do(t, f, auth, desc); status != 200 {
		t.Error("the fault fired twice")
	}

	// A lost delete response: performed, answered 500.
	gone := f.AddInterface(ec2fake.Interface{Subnet: "subnet-0000000b"})
	f.LoseDeleteResponses(1)
	if status, code, _ := do(t, f, auth, del+gone); status != 500 || code != ec2fake.CodeInternalError || f.Has(gone) {
		t.Errorf("lost delete: %d %s, still there %v", status, code, f.Has(gone))
	}
	if sn := f.Subnets()[1]; sn.Available != 251 {
		t.Errorf("subnet b available %d after its only interface went, want 251", sn.Available)
	}
}
