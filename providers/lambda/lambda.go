// Package lambda reads which ECR images an account's Lambda functions run:
// every function of package type Image, $LATEST and each published version
// (aliases point at versions, and a version keeps its own image), by the
// image URI it was given and the digest Lambda resolved. A listing that
// fails makes the source incomplete, and the image kind then trims nothing.
package lambda

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
	"reclaim.dev/reclaim/providers/awsclient"
)

const (
	// DefaultConcurrency is how many functions are read at once.
	DefaultConcurrency = 4
	// pageSize is ListFunctions' and ListVersionsByFunction's MaxItems maximum.
	pageSize = 50
)

// Operation names, the keys of Calls.
const (
	OpListFunctions          = "ListFunctions"
	OpListVersionsByFunction = "ListVersionsByFunction"
	OpGetFunction            = "GetFunction"
)

// API is what the package calls of the Lambda client, with the SDK's signatures.
type API interface {
	lambda.ListFunctionsAPIClient
	lambda.ListVersionsByFunctionAPIClient
	GetFunction(ctx context.Context, in *lambda.GetFunctionInput, optFns ...func(*lambda.Options)) (*lambda.GetFunctionOutput, error)
}

// Options configures one account and region.
type Options = awsclient.ReaderOptions

// Client is one account's Lambda in one region.
type Client struct{ awsclient.Reader[API] }

// spec is the client's service, its defaults and what its listing needs.
var spec = awsclient.ReaderSpec{Service: "lambda", RequestsPerSecond: 10, Burst: 20, MaxAttempts: 10, Calls: DefaultConcurrency,
	Grants: "lambda:ListFunctions, lambda:ListVersionsByFunction and lambda:GetFunction"}

// New builds the client. It calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	c := &Client{}
	err := awsclient.OpenReader(ctx, o, spec, &c.Reader, func(s awsclient.Client) API {
		return lambda.NewFromConfig(s.Config, func(lo *lambda.Options) { s.Into(&lo.BaseEndpoint, &lo.Retryer, &lo.APIOptions, s.Pace) })
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Images reads every image the account's Lambda functions in the region run.
func (c *Client) Images(ctx context.Context) inventory.ImageSource {
	out := c.ImageSource(spec)
	fail := func(op string, err error) inventory.ImageSource {
		c.Fail(&out, spec, op, err)
		return out
	}
	var names []string
	p := lambda.NewListFunctionsPaginator(c.API(), &lambda.ListFunctionsInput{MaxItems: aws.Int32(pageSize)})
	for p.HasMorePages() {
		c.Count(OpListFunctions)
		page, err := p.NextPage(ctx)
		if err != nil {
			return fail(OpListFunctions, err)
		}
		for _, f := range page.Functions {
			if f.PackageType == types.PackageTypeImage {
				names = append(names, aws.ToString(f.FunctionName))
			}
		}
	}
	sets := make([]*imageref.Set, len(names))
	if err := awsclient.Each(len(names), c.Concurrency(), func(i int) error {
		sets[i] = imageref.NewSet()
		return c.function(ctx, names[i], sets[i])
	}); err != nil {
		fail("function reads", err)
	}
	set := imageref.NewSet()
	for _, s := range sets {
		set.Merge(s)
	}
	out.Images = set.Uses()
	return out
}

// function records the image of every version of one function; an error
// names the operation that failed.
func (c *Client) function(ctx context.Context, name string, set *imageref.Set) error {
	var versions []string
	p := lambda.NewListVersionsByFunctionPaginator(c.API(), &lambda.ListVersionsByFunctionInput{FunctionName: aws.String(name), MaxItems: aws.Int32(pageSize)})
	for p.HasMorePages() {
		c.Count(OpListVersionsByFunction)
		page, err := p.NextPage(ctx)
		if gone(err) {
			return nil // deleted since it was listed
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", OpListVersionsByFunction, name, err)
		}
		for _, v := range page.Versions {
			versions = append(versions, aws.ToString(v.Version))
		}
	}
	for _, v := range versions {
		c.Count(OpGetFunction)
		f, err := c.API().GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name), Qualifier: aws.String(v)})
		if gone(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s:%s: %w", OpGetFunction, name, v, err)
		}
		if f.Code == nil {
			continue
		}
		where := fmt.Sprintf("lambda:%s/%s function %s:%s", c.Account(), c.Region(), name, v)
		set.Image(aws.ToString(f.Code.ImageUri), where)
		set.ImageID(aws.ToString(f.Code.ResolvedImageUri), where)
	}
	return nil
}

func gone(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}
