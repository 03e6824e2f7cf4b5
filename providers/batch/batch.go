// Package batch reads which ECR images an account's AWS Batch job
// definitions name: every ACTIVE definition, whose images a job submitted
// later pulls, in each place a definition can hold one (the single
// container, each node range of a multi-node definition, the ECS task
// containers, the EKS pod's containers and init containers). Batch keeps no
// resolved digest, so images are recorded by reference. A page that fails
// makes the source incomplete, and the image kind then trims nothing.
package batch

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
	"reclaim.dev/reclaim/providers/awsclient"
)

const (
	// pageSize is DescribeJobDefinitions' maxResults maximum.
	pageSize = 100
	// statusActive is the status of a definition jobs can still be submitted with.
	statusActive = "ACTIVE"
)

// Operation names, the keys of Calls.
const OpDescribeJobDefinitions = "DescribeJobDefinitions"

// API is what the package calls of the Batch client, with the SDK's signatures.
type API interface {
	batch.DescribeJobDefinitionsAPIClient
}

// Options configures one account and region.
type Options = awsclient.ReaderOptions

// Client is one account's Batch in one region.
type Client struct{ awsclient.Reader[API] }

// spec is the client's service, its defaults and what its listing needs.
var spec = awsclient.ReaderSpec{Service: "batch", RequestsPerSecond: 10, Burst: 20, MaxAttempts: 10, Calls: 1,
	Grants: "batch:DescribeJobDefinitions"}

// New builds the client. It calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	c := &Client{}
	err := awsclient.OpenReader(ctx, o, spec, &c.Reader, func(s awsclient.Client) API {
		return batch.NewFromConfig(s.Config, func(bo *batch.Options) { s.Into(&bo.BaseEndpoint, &bo.Retryer, &bo.APIOptions, s.Pace) })
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// NewWithAPI makes a client over any API (tests).
func NewWithAPI(api API, o Options) *Client {
	return &Client{awsclient.NewReader[API](api, o, spec.Calls)}
}

// Images reads every image the account's ACTIVE Batch job definitions in
// the region name.
func (c *Client) Images(ctx context.Context) inventory.ImageSource {
	out := c.ImageSource(spec)
	set := imageref.NewSet()
	p := batch.NewDescribeJobDefinitionsPaginator(c.API(), &batch.DescribeJobDefinitionsInput{Status: aws.String(statusActive), MaxResults: aws.Int32(pageSize)})
	for p.HasMorePages() {
		c.Count(OpDescribeJobDefinitions)
		page, err := p.NextPage(ctx)
		if err != nil {
			c.Fail(&out, spec, OpDescribeJobDefinitions, err)
			break
		}
		for _, d := range page.JobDefinitions {
			c.definition(d, set)
		}
	}
	out.Images = set.Uses()
	return out
}

// definition records every image one job definition names.
func (c *Client) definition(d types.JobDefinition, set *imageref.Set) {
	where := fmt.Sprintf("batch:%s/%s job-definition %s:%d", c.Account(), c.Region(), aws.ToString(d.JobDefinitionName), aws.ToInt32(d.Revision))
	containers(set, where, d.ContainerProperties, d.EcsProperties, d.EksProperties)
	if d.NodeProperties != nil {
		for _, n := range d.NodeProperties.NodeRangeProperties {
			containers(set, where+" nodes "+aws.ToString(n.TargetNodes), n.Container, n.EcsProperties, n.EksProperties)
		}
	}
}

// containers records the images of what a definition or one of its node
// ranges runs; any of the three may be nil.
func containers(set *imageref.Set, where string, cp *types.ContainerProperties, ecs *types.EcsProperties, eks *types.EksProperties) {
	if cp != nil {
		set.Image(aws.ToString(cp.Image), where)
	}
	if ecs != nil {
		for i, t := range ecs.TaskProperties {
			for _, ct := range t.Containers {
				set.Image(aws.ToString(ct.Image), fmt.Sprintf("%s task %d container %s", where, i, aws.ToString(ct.Name)))
			}
		}
	}
	if eks != nil && eks.PodProperties != nil {
		for _, ct := range eks.PodProperties.Containers {
			set.Image(aws.ToString(ct.Image), where+" container "+aws.ToString(ct.Name))
		}
		for _, ct := range eks.PodProperties.InitContainers {
			set.Image(aws.ToString(ct.Image), where+" init-container "+aws.ToString(ct.Name))
		}
	}
}
