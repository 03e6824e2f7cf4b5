package ec2

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// OpDescribeRegions is DescribeRegions' name, the key of Regions.Calls.
const OpDescribeRegions = "DescribeRegions"

// RegionsAPI is DescribeRegions, with the SDK's signature.
type RegionsAPI interface {
	DescribeRegions(ctx context.Context, in *ec2.DescribeRegionsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeRegionsOutput, error)
}

var _ RegionsAPI = (*ec2.Client)(nil)

// Regions lists one account's enabled regions: DescribeRegions without
// AllRegions, which answers the regions enabled for the account (opt-in
// not required, or opted in), from one region of it. One call, no pages.
type Regions struct {
	api             RegionsAPI
	account, region string
	calls           awsclient.Calls
}

// NewRegions builds the client of the account, in the region the call is
// made from, with the account's identity. It calls nothing.
func NewRegions(ctx context.Context, s awsclient.Service) (*Regions, error) {
	c, err := s.Load(ctx, "ec2", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if err != nil {
		return nil, err
	}
	api := ec2.NewFromConfig(c.Config, func(eo *ec2.Options) {
		c.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, c.Pace)
	})
	return NewRegionsWithAPI(api, s.Account, s.Region), nil
}

// NewRegionsWithAPI lists the regions through any RegionsAPI (tests).
func NewRegionsWithAPI(api RegionsAPI, account, region string) *Regions {
	return &Regions{api: api, account: account, region: region}
}

// Calls says how many DescribeRegions calls the client made.
func (r *Regions) Calls() int { return r.calls.Of(OpDescribeRegions) }

func (r *Regions) list(ctx context.Context) inventory.FleetListing {
	out := inventory.FleetListing{Platform: inventory.Regions, Scope: r.account}
	r.calls.Add(OpDescribeRegions)
	o, err := r.api.DescribeRegions(ctx, &ec2.DescribeRegionsInput{AllRegions: aws.Bool(false)})
	out.Calls = 1
	if err != nil {
		out.Problem = fmt.Sprintf("ec2 DescribeRegions of %s from %s: %v%s", r.account, r.region, err,
			awsclient.Grant(err, "ec2:DescribeRegions", r.account, r.region))
		return out
	}
	for _, reg := range o.Regions {
		// AllRegions false answers enabled regions only; a not-opted-in
		// one would be a disabled region nothing runs in.
		if name := aws.ToString(reg.RegionName); name != "" && aws.ToString(reg.OptInStatus) != "not-opted-in" && !slices.Contains(out.Regions, name) {
			out.Regions = append(out.Regions, name)
		}
	}
	if len(out.Regions) == 0 {
		out.Problem = fmt.Sprintf("ec2 DescribeRegions of %s from %s answered no region", r.account, r.region)
		return out
	}
	slices.Sort(out.Regions)
	out.Complete = true
	return out
}

// regionsMemo shares each account's listing among a run's readers.
type regionsMemo struct {
	mu sync.Mutex
	by map[string]*memoEntry
}

type memoEntry struct {
	once sync.Once
	l    inventory.FleetListing
}

type memoKey struct{}

// WithRegionsMemo makes every Regions.List under ctx list an account's
// regions once: discovery and the image consumers of one run then share a
// single DescribeRegions per account.
func WithRegionsMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &regionsMemo{by: map[string]*memoEntry{}})
}

// List is the account's enabled regions, sorted, as an inventory.Regions
// listing; a failure makes it incomplete, with what to grant. Under
// WithRegionsMemo, the run's first listing of the account.
func (r *Regions) List(ctx context.Context) inventory.FleetListing {
	m, _ := ctx.Value(memoKey{}).(*regionsMemo)
	if m == nil {
		return r.list(ctx)
	}
	m.mu.Lock()
	e := m.by[r.account]
	if e == nil {
		e = &memoEntry{}
		m.by[r.account] = e
	}
	m.mu.Unlock()
	first := false
	e.once.Do(func() { e.l, first = r.list(ctx), true })
	l := e.l
	if !first {
		l.Calls = 0 // another reader's call
	}
	l.Regions = slices.Clone(l.Regions)
	return l
}
