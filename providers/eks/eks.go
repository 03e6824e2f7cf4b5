// Package eks discovers the EKS clusters of one account and region
// (ListClusters, DescribeCluster) and mints the bearer token that reads them,
// the k8s-aws-v1 token `aws eks get-token` makes: a presigned STS
// GetCallerIdentity, made in process from reclaim's own identity (IRSA, Pod
// Identity, an assumed role). Nothing is written to disk and no exec plugin
// runs.
package eks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Defaults.
const (
	// MaxPageSize is ListClusters' maxResults maximum.
	MaxPageSize = 100
	// DefaultRequestsPerSecond and DefaultBurst pace every EKS call.
	DefaultRequestsPerSecond = 10
	DefaultBurst             = 20
	DefaultMaxAttempts       = 10
	// DefaultConcurrency is how many DescribeCluster calls run at once.
	DefaultConcurrency = 4
)

// Operation names, the keys of Calls.
const (
	OpListClusters    = "ListClusters"
	OpDescribeCluster = "DescribeCluster"
)

// API is what the package calls of the EKS client, with the SDK's signatures.
type API interface {
	ListClusters(ctx context.Context, in *eks.ListClustersInput, optFns ...func(*eks.Options)) (*eks.ListClustersOutput, error)
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
}

// Options configures one account and region. Profile, RoleARN and
// ExternalID say how reclaim's identity is reached (the default chain: IRSA
// or Pod Identity in a pod); the token is presigned for STSEndpoint, else
// the region's STS endpoint.
type Options struct {
	awsclient.Service
	STSEndpoint string
	Concurrency int
}

// Client is one account's EKS in one region.
type Client struct {
	api         API
	presign     *sts.PresignClient
	identity    *Identity
	account     string
	region      string
	concurrency int
	calls       awsclient.Calls
}

// New builds the clients. It calls nothing (an assumed role's credentials
// are fetched on the first call).
func New(ctx context.Context, o Options) (*Client, error) {
	c, err := o.Load(ctx, "eks", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if err != nil {
		return nil, err
	}
	api := eks.NewFromConfig(c.Config, func(eo *eks.Options) {
		c.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, c.Pace)
	})
	st := sts.NewFromConfig(c.Config, func(so *sts.Options) {
		if o.STSEndpoint != "" {
			so.BaseEndpoint = aws.String(o.STSEndpoint)
		}
	})
	cl := NewWithAPI(api, o)
	cl.presign = sts.NewPresignClient(st)
	var stsEndpoint *string
	if o.STSEndpoint != "" {
		stsEndpoint = aws.String(o.STSEndpoint)
	}
	cl.identity = newIdentity(c, stsEndpoint, identityKey(o.Service, o.STSEndpoint))
	return cl, nil
}

// Identity asks STS who the client's credentials are (nil for a client
// made with NewWithAPI): a listing counts for the client's account only
// when they are that account's.
func (c *Client) Identity() *Identity { return c.identity }

// NewWithAPI makes a client over any API (tests); it mints no tokens.
func NewWithAPI(api API, o Options) *Client {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return &Client{api: api, account: o.Account, region: o.Region, concurrency: o.Concurrency}
}

// Account and Region are the client's scope.
func (c *Client) Account() string { return c.account }
func (c *Client) Region() string  { return c.region }

// Calls says how many calls of op the client made (attempts not counted).
func (c *Client) Calls(op string) int { return c.calls.Of(op) }

// Discover lists every cluster and describes each. A cluster deleted
// between the two is simply absent; any other failure makes the listing
// incomplete, with what to grant.
func (c *Client) Discover(ctx context.Context) inventory.FleetListing {
	out := inventory.FleetListing{Platform: inventory.EKS, Scope: c.account + "/" + c.region}
	fail := func(op string, err error) inventory.FleetListing {
		out.Complete, out.Clusters = false, nil
		out.Problem = fmt.Sprintf("eks %s in %s/%s: %v%s", op, c.account, c.region, err, hint(err, c.account, c.region))
		out.Calls = c.Calls(OpListClusters) + c.Calls(OpDescribeCluster)
		return out
	}
	var names []string
	p := eks.NewListClustersPaginator(c.api, &eks.ListClustersInput{MaxResults: aws.Int32(MaxPageSize)})
	for p.HasMorePages() {
		c.calls.Add(OpListClusters)
		page, err := p.NextPage(ctx)
		if err != nil {
			return fail(OpListClusters, err)
		}
		names = append(names, page.Clusters...)
	}
	clusters := make([]*inventory.FleetCluster, len(names))
	err := awsclient.Each(len(names), c.concurrency, func(i int) error {
		c.calls.Add(OpDescribeCluster)
		d, err := c.api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(names[i])})
		var nf *types.ResourceNotFoundException
		switch {
		case errors.As(err, &nf):
			// Deleted since it was listed: nothing can use it now.
		case err != nil:
			return fmt.Errorf("cluster %s: %w", names[i], err)
		case d.Cluster != nil:
			if err := c.inScope(d.Cluster); err != nil {
				return fmt.Errorf("cluster %s: %w", names[i], err)
			}
			fc := c.convert(d.Cluster)
			clusters[i] = &fc
		}
		return nil
	})
	if err != nil {
		return fail(OpDescribeCluster, err)
	}
	for _, fc := range clusters {
		if fc != nil {
			out.Clusters = append(out.Clusters, *fc)
		}
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Name < out.Clusters[j].Name })
	out.Complete = true
	out.Calls = c.Calls(OpListClusters) + c.Calls(OpDescribeCluster)
	return out
}

// inScope checks the cluster's ARN against the client's account and
// region. Credentials that land in another account (a profile or role of
// the wrong account) would list that account's clusters as this scope's,
// and make the scope look complete: an error holds it instead.
func (c *Client) inScope(k *types.Cluster) error {
	a, err := arn.Parse(aws.ToString(k.Arn))
	if err != nil || a.Service != "eks" {
		return fmt.Errorf("its ARN %q is not an EKS cluster ARN", aws.ToString(k.Arn))
	}
	if a.AccountID != c.account || a.Region != c.region {
		return fmt.Errorf("its ARN %s is of account %s in %s, not %s in %s: the credentials reach another account or region (check the profile and roleARN)",
			a, a.AccountID, a.Region, c.account, c.region)
	}
	return nil
}

func (c *Client) convert(k *types.Cluster) inventory.FleetCluster {
	fc := inventory.FleetCluster{Name: aws.ToString(k.Name), Platform: inventory.EKS, ID: aws.ToString(k.Arn),
		Account: c.account, Location: c.region, Endpoint: aws.ToString(k.Endpoint), Status: string(k.Status), Labels: k.Tags}
	if v := k.ResourcesVpcConfig; v != nil {
		fc.Network, fc.Subnets = aws.ToString(v.VpcId), v.SubnetIds
	}
	if k.CreatedAt != nil {
		fc.Created = *k.CreatedAt
	}
	if ca := k.CertificateAuthority; ca != nil && ca.Data != nil {
		if pem, err := base64.StdEncoding.DecodeString(*ca.Data); err == nil {
			fc.CAData = pem
		}
	}
	return fc
}

// hint says what to grant for an access error.
func hint(err error, account, region string) string {
	return awsclient.Grant(err, "eks:ListClusters and eks:DescribeCluster", account, region)
}
