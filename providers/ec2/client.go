package ec2

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Defaults and limits.
const (
	// MaxPageSize and MinPageSize bound MaxResults of DescribeSubnets and
	// DescribeNetworkInterfaces; MaxPageSize is the default.
	MaxPageSize = 1000
	MinPageSize = 5
	// MaxFilterValues is the most values one EC2 filter takes.
	MaxFilterValues = 200
	// DefaultRequestsPerSecond and DefaultBurst stay under EC2's bucket for
	// non-mutating actions (100 burst, 20 a second refill), which every
	// node's CNI in the account draws from too.
	DefaultRequestsPerSecond = 10
	DefaultBurst             = 20
	// DefaultDeletesPerSecond and DefaultDeleteBurst stay under
	// DeleteNetworkInterface's own bucket (100 burst, 5 a second refill).
	DefaultDeletesPerSecond = 2
	DefaultDeleteBurst      = 5
	DefaultMaxAttempts      = 10
)

// EC2 error codes this package acts on; compare them exactly (EC2 has both
// InvalidNetworkInterfaceID.NotFound and InvalidNetworkInterfaceId.Malformed).
const (
	codeInterfaceNotFound    = "InvalidNetworkInterfaceID.NotFound"
	codeInterfaceNotFoundAlt = "InvalidNetworkInterface.NotFound"
	codeInterfaceInUse       = "InvalidNetworkInterface.InUse"
	codeSubnetNotFound       = "InvalidSubnetID.NotFound"
)

// Operation names, the keys of Calls.
const (
	OpDescribeSubnets           = "DescribeSubnets"
	OpDescribeNetworkInterfaces = "DescribeNetworkInterfaces"
	OpDeleteNetworkInterface    = "DeleteNetworkInterface"
)

// Options configures one account and region's client.
type Options struct {
	// Service is the account (12-digit id, required: it labels the listing
	// and checks scope), region, identity, endpoint (empty: the SDK's
	// standard configuration decides, AWS_ENDPOINT_URL_EC2 included) and
	// retries; RequestsPerSecond and Burst are the token bucket every attempt
	// of a non-mutating call waits on, default 10 and 20.
	awsclient.Service
	// Subnets are the subnet ids in scope. When empty, SubnetTags selects
	// them; one of the two is required. With both, a subnet must be listed
	// and carry the tags.
	Subnets []string
	// SubnetTags selects subnets by tag: every key must be present with this
	// value ("" matches any value).
	SubnetTags map[string]string
	// DeletesPerSecond and DeleteBurst are the bucket of
	// DeleteNetworkInterface; default 2 and 5.
	DeletesPerSecond float64
	DeleteBurst      int
	// PageSize is MaxResults of the listings: 5..1000, default 1000.
	PageSize int32
}

func (o *Options) defaults() error {
	errs := o.Check("account", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if len(o.Subnets) == 0 && len(o.SubnetTags) == 0 {
		errs = append(errs, errors.New("subnets or subnetTags is required: reclaim lists only the subnets it is told about"))
	}
	for i, s := range o.Subnets {
		if !strings.HasPrefix(s, "subnet-") {
			errs = append(errs, fmt.Errorf("subnets[%d] %q: want a subnet id (subnet-…)", i, s))
		}
	}
	for k := range o.SubnetTags {
		if k == "" {
			errs = append(errs, errors.New("subnetTags: empty tag key"))
		}
	}
	if err := awsclient.CheckPageSize(&o.PageSize, MinPageSize, MaxPageSize, "EC2"); err != nil {
		errs = append(errs, err)
	}
	awsclient.DefaultDeletes(&o.DeletesPerSecond, &o.DeleteBurst, DefaultDeletesPerSecond, DefaultDeleteBurst)
	return errors.Join(errs...)
}

// Client is one account's EC2 in one region.
type Client struct {
	awsclient.Scope
	api        API
	subnets    []string
	subnetTags map[string]string
	pageSize   int32
	awsclient.Paced
}

// New builds the SDK client: config.LoadDefaultConfig with the region and
// profile, an optional assumed role, the adaptive retry mode and the
// client-side rate limiters. It does not call the API (an assumed role's
// credentials are fetched on the first call).
func New(ctx context.Context, o Options) (*Client, error) {
	c, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	// The describe and delete buckets are the client's own (awsclient.Paced).
	if _, c.api, err = c.OpenEC2(ctx, o.Service, "ec2", o.DeletesPerSecond, o.DeleteBurst, "ReclaimPace", OpDeleteNetworkInterface); err != nil {
		return nil, err
	}
	return c, nil
}

// NewWithAPI wraps an API (a decorated *ec2.Client, a test double) as a
// Client. The rate limit, retry, credential and call-counting options are
// then the API's business; the listing options apply.
func NewWithAPI(api API, o Options) (*Client, error) {
	c, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	c.api = api
	return c, nil
}

// newClient fills o's defaults and checks it, and makes a client of it
// with no API yet.
func newClient(o *Options) (*Client, error) {
	if err := o.defaults(); err != nil {
		return nil, fmt.Errorf("ec2 %s/%s: %w", o.Account, o.Region, err)
	}
	return &Client{Scope: awsclient.NewScope(o.Account, o.Region), subnets: awsclient.Unique(o.Subnets),
		subnetTags: maps.Clone(o.SubnetTags), pageSize: o.PageSize}, nil
}

// ---- errors ----

// errRefused marks an error EC2 answered for a delete it did not do
// (outcome.Refused).
var errRefused = outcome.MarkRefused(errors.New("refused"))

// explain renders an API error for an operator (awsclient.Explain): EC2's
// request bucket is shared with every node's CNI.
func (c *Client) explain(op, what string, err error, also ...error) error {
	return awsclient.Explain(awsclient.Call{Service: "ec2", Op: op, Account: c.Account(), Region: c.Region(), What: what,
		ThrottleAlso: " (EC2's request bucket is shared with every node's CNI in the account) or ask AWS to raise the EC2 API rate limit"}, err, also...)
}

// ---- List ----

// List lists the account and region: the subnets in scope (DescribeSubnets)
// and every network interface in them (DescribeNetworkInterfaces with a
// subnet-id filter of at most 200 subnets, pages of PageSize, managed
// resources included).
//
// It never returns an error. A failed page, or a configured subnet that EC2
// does not return, makes the listing incomplete with a Problem an operator
// can act on; what was seen is kept.
func (c *Client) List(ctx context.Context) (l inventory.NetworkListing) {
	l = inventory.NetworkListing{Account: c.Account(), Region: c.Region(), Complete: true}
	var problems []string
	fail := func(p string) {
		l.Complete = false
		problems = append(problems, p)
	}
	defer func() { l.Problem = strings.Join(problems, "; ") }()

	subnets, problem := c.listSubnets(ctx)
	if problem != "" {
		fail(problem)
	}
	l.Subnets = subnets
	if len(subnets) == 0 {
		if problem == "" {
			problems = append(problems, fmt.Sprintf("no subnet in %s/%s carries the tags %s: nothing to list (check subnetTags)", c.Account(), c.Region(), c.tagText()))
		}
		return l
	}
	ids := make([]string, len(subnets))
	for i, s := range subnets {
		ids[i] = s.ID
	}
	for start := 0; start < len(ids); start += MaxFilterValues {
		chunk := ids[start:min(start+MaxFilterValues, len(ids))]
		got, err := c.describeInterfaces(ctx, types.Filter{Name: aws.String("subnet-id"), Values: chunk}, &l.Interfaces)
		if err != nil {
			fail(fmt.Sprintf("%v (%d network interfaces seen before it; who holds the subnets' addresses is partly unknown)", err, got))
			break
		}
	}
	return l
}

func (c *Client) tagText() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c.subnetTags)) {
		if v := c.subnetTags[k]; v != "" {
			parts = append(parts, k+"="+v)
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, ",")
}

func (c *Client) tagFilters() []types.Filter {
	var fs []types.Filter
	for _, k := range slices.Sorted(maps.Keys(c.subnetTags)) {
		if v := c.subnetTags[k]; v != "" {
			fs = append(fs, types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		} else {
			fs = append(fs, types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		}
	}
	return fs
}

// listSubnets describes the subnets in scope. With configured ids it asks by
// SubnetIds (no MaxResults); EC2 then fails the whole call with
// InvalidSubnetID.NotFound if one id does not exist, so it asks again with a
// subnet-id filter, which leaves missing ones out, to list the others and name
// the missing.
func (c *Client) listSubnets(ctx context.Context) ([]inventory.Subnet, string) {
	var out []inventory.Subnet
	var err error
	if len(c.subnets) > 0 {
		_, err = c.describeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: c.subnets, Filters: c.tagFilters()}, &out)
		if awsclient.ErrorCode(err) == codeSubnetNotFound {
			out, err = nil, nil
			for start := 0; start < len(c.subnets) && err == nil; start += MaxFilterValues {
				chunk := c.subnets[start:min(start+MaxFilterValues, len(c.subnets))]
				_, err = c.describeSubnets(ctx, &ec2.DescribeSubnetsInput{
					Filters:    append(c.tagFilters(), types.Filter{Name: aws.String("subnet-id"), Values: chunk}),
					MaxResults: aws.Int32(c.pageSize),
				}, &out)
			}
		}
	} else {
		_, err = c.describeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: c.tagFilters(), MaxResults: aws.Int32(c.pageSize)}, &out)
	}
	if err != nil {
		return out, fmt.Sprintf("%v (the subnets in scope are unknown)", err)
	}
	if len(c.subnets) > 0 {
		found := make(map[string]bool, len(out))
		for _, s := range out {
			found[s.ID] = true
		}
		var missing []string
		for _, id := range c.subnets {
			if !found[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			why := "do not exist in " + c.Account() + "/" + c.Region() + " (check the subnet ids, the region and the account the credentials reach)"
			if len(c.subnetTags) > 0 {
				why = "do not exist in " + c.Account() + "/" + c.Region() + " or do not carry the tags " + c.tagText()
			}
			return out, fmt.Sprintf("configured subnets %s %s: their addresses are unknown", strings.Join(missing, ", "), why)
		}
	}
	return out, ""
}

func (c *Client) describeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, out *[]inventory.Subnet) (int, error) {
	p := ec2.NewDescribeSubnetsPaginator(c.api, in)
	n := 0
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			return n, c.explain(OpDescribeSubnets, fmt.Sprintf("page %d", page), err)
		}
		for i := range res.Subnets {
			*out = append(*out, c.convertSubnet(&res.Subnets[i]))
			n++
		}
	}
	return n, nil
}

func (c *Client) convertSubnet(s *types.Subnet) inventory.Subnet {
	sn := inventory.Subnet{
		Account:   c.Account(),
		Region:    c.Region(),
		ID:        aws.ToString(s.SubnetId),
		VPC:       aws.ToString(s.VpcId),
		AZ:        aws.ToString(s.AvailabilityZone),
		CIDR:      aws.ToString(s.CidrBlock),
		Available: int(aws.ToInt32(s.AvailableIpAddressCount)),
	}
	for _, t := range s.Tags {
		if aws.ToString(t.Key) == "Name" {
			sn.Name = aws.ToString(t.Value)
		}
		if n, ok := strings.CutPrefix(aws.ToString(t.Key), inventory.SubnetClusterTagPrefix); ok && n != "" {
			sn.Clusters = append(sn.Clusters, n)
		}
	}
	sn.Usable = Usable(sn.CIDR)
	return sn
}

// Usable is how many addresses of an IPv4 subnet can be assigned:
// 2^(32-prefix) − 5, since AWS reserves the first four and the last. It is 0
// for what is not an IPv4 CIDR.
func Usable(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return 0
	}
	return max(0, 1<<(32-p.Bits())-5)
}

// describeInterfaces lists the interfaces matching one filter into out and
// returns how many it added.
func (c *Client) describeInterfaces(ctx context.Context, f types.Filter, out *[]inventory.NetInterface) (int, error) {
	p := ec2.NewDescribeNetworkInterfacesPaginator(c.api, &ec2.DescribeNetworkInterfacesInput{
		Filters:    []types.Filter{f},
		MaxResults: aws.Int32(c.pageSize),
		// Since 2026 EC2 leaves out interfaces that an AWS service manages
		// (operator.managed) unless asked for them; without this, who holds a
		// subnet's addresses is under-counted. The field exists since
		// github.com/aws/aws-sdk-go-v2/service/ec2 v1.299.0.
		IncludeManagedResources: aws.Bool(true),
	})
	n := 0
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			return n, c.explain(OpDescribeNetworkInterfaces, fmt.Sprintf("page %d", page), err)
		}
		for i := range res.NetworkInterfaces {
			*out = append(*out, convertInterface(&res.NetworkInterfaces[i]))
			n++
		}
	}
	return n, nil
}

func convertInterface(n *types.NetworkInterface) inventory.NetInterface {
	ni := inventory.NetInterface{
		ID:               aws.ToString(n.NetworkInterfaceId),
		Subnet:           aws.ToString(n.SubnetId),
		VPC:              aws.ToString(n.VpcId),
		AZ:               aws.ToString(n.AvailabilityZone),
		Description:      aws.ToString(n.Description),
		Status:           string(n.Status),
		Type:             string(n.InterfaceType),
		RequesterManaged: aws.ToBool(n.RequesterManaged),
		RequesterID:      aws.ToString(n.RequesterId),
		Prefixes:         len(n.Ipv4Prefixes),
	}
	if n.Operator != nil {
		ni.OperatorManaged = aws.ToBool(n.Operator.Managed)
		ni.OperatorPrincipal = aws.ToString(n.Operator.Principal)
	}
	if n.Attachment != nil {
		ni.Instance = aws.ToString(n.Attachment.InstanceId)
	}
	if len(n.TagSet) > 0 {
		ni.Tags = make(map[string]string, len(n.TagSet))
		for _, t := range n.TagSet {
			ni.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	for _, a := range n.PrivateIpAddresses {
		if ip := aws.ToString(a.PrivateIpAddress); ip != "" && aws.ToBool(a.Primary) {
			ni.IPs = append(ni.IPs, ip)
		}
	}
	for _, a := range n.PrivateIpAddresses {
		if ip := aws.ToString(a.PrivateIpAddress); ip != "" && !aws.ToBool(a.Primary) {
			ni.IPs = append(ni.IPs, ip)
		}
	}
	if len(ni.IPs) == 0 && aws.ToString(n.PrivateIpAddress) != "" {
		ni.IPs = []string{aws.ToString(n.PrivateIpAddress)}
	}
	return ni
}

// ---- re-read and delete ----

// Interfaces re-reads network interfaces by id, before they are deleted. It
// uses the network-interface-id filter (at most 200 ids per call), not
// NetworkInterfaceIds, which fails the whole call with
// InvalidNetworkInterfaceID.NotFound when one is gone: interfaces that no
// longer exist are simply absent from the result. Managed resources are
// included.
func (c *Client) Interfaces(ctx context.Context, ids []string) ([]inventory.NetInterface, error) {
	ids = awsclient.Unique(ids)
	var out []inventory.NetInterface
	for start := 0; start < len(ids); start += MaxFilterValues {
		chunk := ids[start:min(start+MaxFilterValues, len(ids))]
		if _, err := c.describeInterfaces(ctx, types.Filter{Name: aws.String("network-interface-id"), Values: chunk}, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteInterface deletes one network interface (DeleteNetworkInterface,
// paced by the delete bucket). An interface that does not exist
// (InvalidNetworkInterfaceID.NotFound, InvalidNetworkInterface.NotFound) is
// an error wrapping outcome.ErrNotFound, which callers treat as success; an attached
// one (InvalidNetworkInterface.InUse) wraps outcome.ErrInUse; any other answer of
// EC2's (a 4xx) is refused; no answer is unknown (outcome.Of).
func (c *Client) DeleteInterface(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("ec2 %s %s/%s: empty network interface id", OpDeleteNetworkInterface, c.Account(), c.Region())
	}
	_, err := c.api.DeleteNetworkInterface(ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: aws.String(id)})
	if err == nil {
		return nil
	}
	switch awsclient.ErrorCode(err) {
	case codeInterfaceNotFound, codeInterfaceNotFoundAlt:
		return c.explain(OpDeleteNetworkInterface, id, err, outcome.ErrNotFound)
	case codeInterfaceInUse:
		return c.explain(OpDeleteNetworkInterface, id, err, outcome.ErrInUse)
	}
	if awsclient.Refusal(err) {
		return c.explain(OpDeleteNetworkInterface, id, err, errRefused)
	}
	return c.explain(OpDeleteNetworkInterface, id, err) // no answer: the outcome is unknown
}
