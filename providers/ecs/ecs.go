// Package ecs reads which ECR images an account's ECS runs outside
// Kubernetes: the containers of every ACTIVE task definition (what a
// service or a scheduled task starts next), of every task definition a
// service names (its own, its deployments' and its task sets', INACTIVE
// revisions and services scaled to zero included: they can scale up again)
// and of every RUNNING task (by tag and by the digest it resolved). A
// listing that fails makes the source incomplete, and the image kind then
// trims nothing.
package ecs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
	"reclaim.dev/reclaim/providers/awsclient"
)

const (
	// DefaultConcurrency is how many DescribeTaskDefinition calls run at once.
	DefaultConcurrency = 4
	// pageSize is the list operations' maxResults maximum, and DescribeTasks' batch.
	pageSize = 100
	// servicesBatch is DescribeServices' maximum.
	servicesBatch = 10
)

// Operation names, the keys of Calls.
const (
	OpListTaskDefinitions    = "ListTaskDefinitions"
	OpDescribeTaskDefinition = "DescribeTaskDefinition"
	OpListClusters           = "ListClusters"
	OpListTasks              = "ListTasks"
	OpDescribeTasks          = "DescribeTasks"
	OpListServices           = "ListServices"
	OpDescribeServices       = "DescribeServices"
)

// API is what the package calls of the ECS client, with the SDK's signatures.
type API interface {
	ecs.ListTaskDefinitionsAPIClient
	ecs.ListClustersAPIClient
	ecs.ListTasksAPIClient
	ecs.ListServicesAPIClient
	DescribeTaskDefinition(ctx context.Context, in *ecs.DescribeTaskDefinitionInput, optFns ...func(*ecs.Options)) (*ecs.DescribeTaskDefinitionOutput, error)
	DescribeTasks(ctx context.Context, in *ecs.DescribeTasksInput, optFns ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error)
	DescribeServices(ctx context.Context, in *ecs.DescribeServicesInput, optFns ...func(*ecs.Options)) (*ecs.DescribeServicesOutput, error)
}

// Options configures one account and region.
type Options = awsclient.ReaderOptions

// Client is one account's ECS in one region.
type Client struct{ awsclient.Reader[API] }

// spec is the client's service, its defaults and what its listing needs.
var spec = awsclient.ReaderSpec{Service: "ecs", RequestsPerSecond: 20, Burst: 40, MaxAttempts: 10, Calls: DefaultConcurrency,
	Grants: "ecs:ListTaskDefinitions, ecs:DescribeTaskDefinition, ecs:ListClusters, ecs:ListTasks, ecs:DescribeTasks, ecs:ListServices and ecs:DescribeServices"}

// New builds the client. It calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	c := &Client{}
	err := awsclient.OpenReader(ctx, o, spec, &c.Reader, func(s awsclient.Client) API {
		return ecs.NewFromConfig(s.Config, func(eo *ecs.Options) { s.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, s.Pace) })
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Images reads every image the account's ECS in the region names.
func (c *Client) Images(ctx context.Context) inventory.ImageSource {
	out := c.ImageSource(spec)
	set := imageref.NewSet()
	fail := func(op string, err error) { c.Fail(&out, spec, op, err) }
	described := map[string]bool{}
	if op, err := c.taskDefinitions(ctx, set, described); err != nil {
		fail(op, err)
	}
	clusters, err := c.clusters(ctx)
	if err != nil {
		fail(OpListClusters, err)
	} else {
		if op, err := c.tasks(ctx, set, clusters); err != nil {
			fail(op, err)
		}
		if op, err := c.services(ctx, set, clusters, described); err != nil {
			fail(op, err)
		}
	}
	out.Images = set.Uses()
	return out
}

// taskDefinitions records the containers of every ACTIVE task definition,
// and marks in described those it read.
func (c *Client) taskDefinitions(ctx context.Context, set *imageref.Set, described map[string]bool) (string, error) {
	var arns []string
	p := ecs.NewListTaskDefinitionsPaginator(c.API(), &ecs.ListTaskDefinitionsInput{Status: types.TaskDefinitionStatusActive, MaxResults: aws.Int32(pageSize)})
	for p.HasMorePages() {
		c.Count(OpListTaskDefinitions)
		page, err := p.NextPage(ctx)
		if err != nil {
			return OpListTaskDefinitions, err
		}
		arns = append(arns, page.TaskDefinitionArns...)
	}
	if err := c.describeTaskDefinitions(ctx, set, arns); err != nil {
		return OpDescribeTaskDefinition, err
	}
	for _, arn := range arns {
		described[arn] = true
	}
	return "", nil
}

// describeTaskDefinitions records the containers of the task definitions
// arns names, any status; one deleted since it was named is skipped.
func (c *Client) describeTaskDefinitions(ctx context.Context, set *imageref.Set, arns []string) error {
	defs := make([]*types.TaskDefinition, len(arns))
	err := awsclient.Each(len(arns), c.Concurrency(), func(i int) error {
		c.Count(OpDescribeTaskDefinition)
		d, err := c.API().DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(arns[i])})
		switch {
		case err != nil && deregistered(err):
			// Deleted since it was listed: nothing starts it any more.
		case err != nil:
			return fmt.Errorf("%s: %w", arns[i], err)
		default:
			defs[i] = d.TaskDefinition
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range defs {
		if d == nil {
			continue
		}
		where := fmt.Sprintf("ecs:%s/%s task-definition %s:%d", c.Account(), c.Region(), aws.ToString(d.Family), d.Revision)
		for _, cd := range d.ContainerDefinitions {
			set.Image(aws.ToString(cd.Image), where+" container "+aws.ToString(cd.Name))
		}
	}
	return nil
}

// clusters lists the ARNs of every cluster.
func (c *Client) clusters(ctx context.Context) ([]string, error) {
	var clusters []string
	p := ecs.NewListClustersPaginator(c.API(), &ecs.ListClustersInput{MaxResults: aws.Int32(pageSize)})
	for p.HasMorePages() {
		c.Count(OpListClusters)
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		clusters = append(clusters, page.ClusterArns...)
	}
	return clusters, nil
}

// tasks records the containers of every RUNNING task of the clusters.
func (c *Client) tasks(ctx context.Context, set *imageref.Set, clusters []string) (string, error) {
	for _, cluster := range clusters {
		var arns []string
		tp := ecs.NewListTasksPaginator(c.API(), &ecs.ListTasksInput{Cluster: aws.String(cluster), DesiredStatus: types.DesiredStatusRunning, MaxResults: aws.Int32(pageSize)})
		for tp.HasMorePages() {
			c.Count(OpListTasks)
			page, err := tp.NextPage(ctx)
			if err != nil {
				return OpListTasks, fmt.Errorf("%s: %w", cluster, err)
			}
			arns = append(arns, page.TaskArns...)
		}
		name := cluster[strings.LastIndexByte(cluster, '/')+1:]
		for batch := range slices.Chunk(arns, pageSize) {
			c.Count(OpDescribeTasks)
			d, err := c.API().DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(cluster), Tasks: batch})
			if err != nil {
				return OpDescribeTasks, fmt.Errorf("%s: %w", cluster, err)
			}
			for _, f := range d.Failures {
				if aws.ToString(f.Reason) != "MISSING" { // MISSING: stopped and gone since the list
					return OpDescribeTasks, fmt.Errorf("%s: task %s: %s %s", cluster, aws.ToString(f.Arn), aws.ToString(f.Reason), aws.ToString(f.Detail))
				}
			}
			for _, t := range d.Tasks {
				arn := aws.ToString(t.TaskArn)
				where := fmt.Sprintf("ecs:%s/%s cluster %s task %s", c.Account(), c.Region(), name, arn[strings.LastIndexByte(arn, '/')+1:])
				for _, ct := range t.Containers {
					img, w := aws.ToString(ct.Image), where+" container "+aws.ToString(ct.Name)
					set.Image(img, w)
					// The digest it resolved, in the repository it names.
					if ref, ok, err := imageref.Parse(img); ok && err == nil && aws.ToString(ct.ImageDigest) != "" {
						ref.Tag, ref.Digest = "", aws.ToString(ct.ImageDigest)
						set.Put(ref, w, "")
					}
				}
			}
		}
	}
	return "", nil
}

// services records the containers of every task definition a service of
// the clusters names and described lacks. A deregistered (INACTIVE)
// revision is not in the ACTIVE listing, yet a service may still run it, or
// scale it up again from zero.
func (c *Client) services(ctx context.Context, set *imageref.Set, clusters []string, described map[string]bool) (string, error) {
	var arns []string
	named := func(arn *string) {
		if a := aws.ToString(arn); a != "" && !described[a] {
			described[a] = true
			arns = append(arns, a)
		}
	}
	for _, cluster := range clusters {
		var services []string
		p := ecs.NewListServicesPaginator(c.API(), &ecs.ListServicesInput{Cluster: aws.String(cluster), MaxResults: aws.Int32(pageSize)})
		for p.HasMorePages() {
			c.Count(OpListServices)
			page, err := p.NextPage(ctx)
			if err != nil {
				return OpListServices, fmt.Errorf("%s: %w", cluster, err)
			}
			services = append(services, page.ServiceArns...)
		}
		for batch := range slices.Chunk(services, servicesBatch) {
			c.Count(OpDescribeServices)
			d, err := c.API().DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String(cluster), Services: batch})
			if err != nil {
				return OpDescribeServices, fmt.Errorf("%s: %w", cluster, err)
			}
			for _, f := range d.Failures {
				if aws.ToString(f.Reason) != "MISSING" { // MISSING: deleted since the list
					return OpDescribeServices, fmt.Errorf("%s: service %s: %s %s", cluster, aws.ToString(f.Arn), aws.ToString(f.Reason), aws.ToString(f.Detail))
				}
			}
			for _, s := range d.Services {
				named(s.TaskDefinition)
				for _, dep := range s.Deployments { // PRIMARY, and ACTIVE ones still draining
					named(dep.TaskDefinition)
				}
				for _, ts := range s.TaskSets { // CODE_DEPLOY and EXTERNAL controllers
					named(ts.TaskDefinition)
				}
			}
		}
	}
	if err := c.describeTaskDefinitions(ctx, set, arns); err != nil {
		return OpDescribeTaskDefinition, err
	}
	return "", nil
}

// deregistered reports DescribeTaskDefinition's answer for a task
// definition deleted since it was listed.
func deregistered(err error) bool {
	var ce *types.ClientException
	return errors.As(err, &ce) && strings.Contains(ce.ErrorMessage(), "Unable to describe task definition")
}
