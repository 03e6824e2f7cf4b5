package ec2_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory/contracttest"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

// sdk is the bare SDK client, no retries, against an endpoint.
func sdk(endpoint string) *sdkec2.Client {
	return sdkec2.New(sdkec2.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		RetryMaxAttempts: 1,
	})
}

// serveFile answers every request with a testdata file.
func serveFile(t *testing.T, name string, status int) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The published samples parse through the SDK into what the conversion needs.
func TestWireSamplesThroughTheSDK(t *testing.T) {
	for _, name := range []string{"botocore_ec2-describe-network-interfaces.xml", "aws_apiref_DescribeNetworkInterfaces_example1.xml"} {
		t.Run(name, func(t *testing.T) {
			out, err := sdk(serveFile(t, name, 200)).DescribeNetworkInterfaces(ctx, &sdkec2.DescribeNetworkInterfacesInput{})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.NetworkInterfaces) != 2 {
				t.Fatalf("%d interfaces", len(out.NetworkInterfaces))
			}
			ni := ec2.ConvertInterface(&out.NetworkInterfaces[0])
			if ni.ID != "eni-0f62d866" || ni.Subnet != "subnet-c53c87ac" || ni.VPC != "vpc-cc3c87a5" || ni.Status != "in-use" ||
				!slices.Equal(ni.IPs, []string{"10.0.0.146", "10.0.0.148", "10.0.0.150"}) || ni.Instance == "" || ni.RequesterManaged {
				t.Errorf("first: %+v", ni)
			}
			if ni := ec2.ConvertInterface(&out.NetworkInterfaces[1]); ni.Description != "Primary network interface" || len(ni.IPs) != 2 {
				t.Errorf("second: %+v", ni)
			}
		})
	}
	t.Run("describe subnets", func(t *testing.T) {
		out, err := sdk(serveFile(t, "botocore_ec2-describe-subnets.xml", 200)).DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{})
		if err != nil {
			t.Fatal(err)
		}
		s := out.Subnets[0]
		if aws.ToString(s.SubnetId) != "subnet-812910e8" || aws.ToInt32(s.AvailableIpAddressCount) != 251 || ec2.Usable(aws.ToString(s.CidrBlock)) != 251 {
			t.Errorf("subnet %+v", s)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if _, err := sdk(serveFile(t, "aws_apiref_DeleteNetworkInterface_example.xml", 200)).DeleteNetworkInterface(ctx,
			&sdkec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: aws.String("eni-ffda3197")}); err != nil {
			t.Fatal(err)
		}
	})
	for name, want := range map[string]string{
		"botocore_ec2-error-describe-instances.xml":                       "InvalidInstanceID.Malformed",
		"realcapture_f5_issue150_InvalidNetworkInterfaceId_Malformed.xml": "InvalidNetworkInterfaceId.Malformed",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := sdk(serveFile(t, name, 400)).DescribeNetworkInterfaces(ctx, &sdkec2.DescribeNetworkInterfacesInput{})
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != want || !strings.HasPrefix(ae.ErrorMessage(), "Invalid id: ") {
				t.Errorf("error %v, want code %s", err, want)
			}
		})
	}
}

// The fake's answers round-trip through the SDK's deserializer: every field
// it writes comes back.
func TestFakeRoundTripsThroughTheSDK(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	f.AddSubnet(ec2fake.Subnet{ID: "subnet-0123456789abcdef0", CIDR: "10.0.0.0/20", AZ: "us-east-1b", VPC: "vpc-0123456789abcdef0", Tags: map[string]string{"Name": "fargate-b"}})
	id := f.AddInterface(ec2fake.Interface{
		ID: "eni-0123456789abcdef0", Subnet: "subnet-0123456789abcdef0", Description: "Amazon EKS fargate", Type: "interface",
		RequesterManaged: true, RequesterID: "AROAEXAMPLE:AmazonEKS", OperatorManaged: true, OperatorPrincipal: "eks.amazonaws.com",
		Tags: map[string]string{"k": "v"}, IPs: []string{"10.0.0.5", "10.0.0.6"}, Prefixes: []string{"10.0.1.0/28"}, Instance: "i-0123456789abcdef0",
	})
	c := sdk(f.URL())
	out, err := c.DescribeNetworkInterfaces(ctx, &sdkec2.DescribeNetworkInterfacesInput{IncludeManagedResources: aws.Bool(true), MaxResults: aws.Int32(5)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NetworkInterfaces) != 1 || out.NextToken != nil {
		t.Fatalf("%d interfaces, next %v", len(out.NetworkInterfaces), out.NextToken)
	}
	n := out.NetworkInterfaces[0]
	checks := map[string][2]any{
		"id":           {aws.ToString(n.NetworkInterfaceId), id},
		"subnet":       {aws.ToString(n.SubnetId), "subnet-0123456789abcdef0"},
		"vpc":          {aws.ToString(n.VpcId), "vpc-0123456789abcdef0"},
		"az":           {aws.ToString(n.AvailabilityZone), "us-east-1b"},
		"description":  {aws.ToString(n.Description), "Amazon EKS fargate"},
		"owner":        {aws.ToString(n.OwnerId), ec2fake.DefaultAccount},
		"requesterId":  {aws.ToString(n.RequesterId), "AROAEXAMPLE:AmazonEKS"},
		"requesterMgd": {aws.ToBool(n.RequesterManaged), true},
		"status":       {n.Status, types.NetworkInterfaceStatusInUse},
		"type":         {n.InterfaceType, types.NetworkInterfaceTypeInterface},
		"primary":      {aws.ToString(n.PrivateIpAddress), "10.0.0.5"},
		"ips":          {len(n.PrivateIpAddresses), 2},
		"primaryFlag":  {aws.ToBool(n.PrivateIpAddresses[0].Primary), true},
		"prefix":       {aws.ToString(n.Ipv4Prefixes[0].Ipv4Prefix), "10.0.1.0/28"},
		"instance":     {aws.ToString(n.Attachment.InstanceId), "i-0123456789abcdef0"},
		"attachment":   {n.Attachment.Status, types.AttachmentStatusAttached},
		"tag":          {aws.ToString(n.TagSet[0].Key) + "=" + aws.ToString(n.TagSet[0].Value), "k=v"},
		"managed":      {aws.ToBool(n.Operator.Managed), true},
		"principal":    {aws.ToString(n.Operator.Principal), "eks.amazonaws.com"},
		"hidden":       {aws.ToBool(n.Operator.HiddenByDefault), true},
		"mac":          {aws.ToString(n.MacAddress) != "", true},
	}
	for k, v := range checks {
		if v[0] != v[1] {
			t.Errorf("%s: got %v, want %v", k, v[0], v[1])
		}
	}
	sub, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0123456789abcdef0"}})
	if err != nil {
		t.Fatal(err)
	}
	s := sub.Subnets[0]
	if aws.ToString(s.CidrBlock) != "10.0.0.0/20" || aws.ToInt32(s.AvailableIpAddressCount) != 4091-2-16 || aws.ToString(s.VpcId) != "vpc-0123456789abcdef0" ||
		aws.ToString(s.AvailabilityZone) != "us-east-1b" || len(s.Tags) != 1 || s.State != types.SubnetStateAvailable {
		t.Errorf("subnet %+v", s)
	}
	_, err = c.DeleteNetworkInterface(ctx, &sdkec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: aws.String("eni-0000000000000dead")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidNetworkInterfaceID.NotFound" || ae.ErrorMessage() != "The networkInterface ID 'eni-0000000000000dead' does not exist" {
		t.Errorf("delete missing: %v", err)
	}
}

// shape is the set of element paths of an XML document, "item" indexes
// folded, with the root's namespace.
func shape(t *testing.T, body []byte) (paths map[string]bool, ns string) {
	t.Helper()
	paths = map[string]bool{}
	d := xml.NewDecoder(strings.NewReader(string(body)))
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return paths, ns
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				ns = e.Name.Space
			}
			stack = append(stack, e.Name.Local)
			paths[strings.Join(stack, "/")] = true
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

// post sends one signed-looking Query request to the fake and returns the raw answer.
func post(t *testing.T, f *ec2fake.Server, form string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240301/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// The fake's XML has the samples' shape: every element of a sample is in the
// fake's answer (but what the fake does not model: security groups, IPv6),
// the namespace is 2016-11-15, and errors are <Response> without one.
func TestFakeMatchesTheSamplesShape(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	f.AddSubnet(ec2fake.Subnet{ID: "subnet-c53c87ac", CIDR: "10.0.0.0/24"})
	f.AddInterface(ec2fake.Interface{ID: "eni-0f62d866aaaaaaaa", Subnet: "subnet-c53c87ac", IPs: []string{"10.0.0.146", "10.0.0.148"}, Instance: "i-1234567890abcdef0"})
	skip := func(p string) bool {
		return strings.Contains(p, "/groupSet") || strings.Contains(p, "/ipv6AddressesSet/")
	}

	for _, c := range []struct{ sample, form string }{
		{"aws_apiref_DescribeNetworkInterfaces_example1.xml", "Action=DescribeNetworkInterfaces&Version=2016-11-15"},
		{"botocore_ec2-describe-subnets.xml", "Action=DescribeSubnets&Version=2016-11-15"},
		{"aws_apiref_DeleteNetworkInterface_example.xml", "Action=DeleteNetworkInterface&Version=2016-11-15&NetworkInterfaceId=eni-0f62d866aaaaaaaa"},
		{"botocore_ec2-error-describe-instances.xml", "Action=DeleteNetworkInterface&Version=2016-11-15&NetworkInterfaceId=x"},
	} {
		t.Run(c.sample, func(t *testing.T) {
			sample, err := os.ReadFile(filepath.Join("testdata", c.sample))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := shape(t, sample)
			f.Detach("eni-0f62d866aaaaaaaa")
			if strings.Contains(c.sample, "Describe") {
				f.Attach("eni-0f62d866aaaaaaaa", "i-1234567890abcdef0")
			}
			status, body := post(t, f, c.form)
			got, ns := shape(t, body)
			for p := range want {
				if !got[p] && !skip(p) {
					t.Errorf("the fake's answer lacks %s", p)
				}
			}
			isErr := strings.Contains(c.sample, "error")
			switch {
			case isErr && (ns != "" || status != 400):
				t.Errorf("error answer: status %d, namespace %q; want 400 and none", status, ns)
			case !isErr && (ns != ec2fake.Namespace || status != 200):
				t.Errorf("status %d, namespace %q, want 200 and %s", status, ns, ec2fake.Namespace)
			}
			if !strings.HasPrefix(string(body), `<?xml version="1.0" encoding="UTF-8"?>`) {
				t.Errorf("no XML declaration: %.60s", body)
			}
		})
	}
}

// The EC2 provider keeps the delete contract the applier relies on.
func TestDeleteContract(t *testing.T) {
	f := newFake(t, ec2fake.Options{})
	subnets := seedSubnets(f, 1)
	c := newClient(t, f.URL())
	var n atomic.Int32
	contracttest.Run(t, contracttest.Deleter{
		Get: func(ctx context.Context, id string) error {
			got, err := c.Interfaces(ctx, []string{id})
			if err != nil {
				return err
			}
			if len(got) == 0 {
				return fmt.Errorf("network interface %s: %w", id, outcome.ErrNotFound)
			}
			return nil
		},
		Delete: c.DeleteInterface,
		Existing: func(t *testing.T) string {
			return f.AddInterface(ec2fake.Interface{ID: fmt.Sprintf("eni-%017d", n.Add(1)), Subnet: subnets[0]})
		},
		Missing: "eni-0000000000000dead",
	})
}
