// Package ecr lists the images of Amazon ECR registries and deletes images by
// digest, through aws-sdk-go-v2. Everything it returns is converted to
// inventory types at this edge; no SDK type leaves the package.
//
// One Client is one registry (an account in a region). Every API attempt of a
// client, retries included, first waits on the client's token bucket of its
// operation (Options.RequestsPerSecond; ECR's rate quotas are per API
// action), and throttling answers are absorbed by the
// SDK's adaptive retry mode. A Fleet is the set of clients reclaim is
// configured with.
package ecr

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ecr"

	"reclaim.dev/reclaim/inventory"
)

// API is the narrow seam to the SDK: exactly the ECR operations this package
// calls, with the SDK's signatures, so *ecr.Client, a decorator or a fake
// satisfies it.
type API interface {
	DescribeRepositories(ctx context.Context, in *ecr.DescribeRepositoriesInput, optFns ...func(*ecr.Options)) (*ecr.DescribeRepositoriesOutput, error)
	DescribeImages(ctx context.Context, in *ecr.DescribeImagesInput, optFns ...func(*ecr.Options)) (*ecr.DescribeImagesOutput, error)
	BatchGetImage(ctx context.Context, in *ecr.BatchGetImageInput, optFns ...func(*ecr.Options)) (*ecr.BatchGetImageOutput, error)
	BatchDeleteImage(ctx context.Context, in *ecr.BatchDeleteImageInput, optFns ...func(*ecr.Options)) (*ecr.BatchDeleteImageOutput, error)
	ListTagsForResource(ctx context.Context, in *ecr.ListTagsForResourceInput, optFns ...func(*ecr.Options)) (*ecr.ListTagsForResourceOutput, error)
	GetRepositoryPolicy(ctx context.Context, in *ecr.GetRepositoryPolicyInput, optFns ...func(*ecr.Options)) (*ecr.GetRepositoryPolicyOutput, error)
	GetRegistryPolicy(ctx context.Context, in *ecr.GetRegistryPolicyInput, optFns ...func(*ecr.Options)) (*ecr.GetRegistryPolicyOutput, error)
}

var _ API = (*ecr.Client)(nil)

// Provider is what the planner and applier use: every configured registry's
// listing, and the re-read and delete of images in one repository.
type Provider interface {
	// List lists every registry, in parallel. It never fails: problems make a
	// registry or repository listing incomplete (Complete false, Problem set).
	List(ctx context.Context) []inventory.RegistryListing
	// DescribeImages re-reads images by digest; images that no longer exist
	// are absent from the result.
	DescribeImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.Image, error)
	// RepoTags re-reads a repository's resource tags (its opt-out).
	RepoTags(ctx context.Context, repo inventory.RepoKey) (map[string]string, error)
	// DeleteImages deletes at most MaxBatch images by digest and returns ECR's
	// per-image failures (ImageNotFound means already gone).
	DeleteImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error)
}

var _ Provider = (*Fleet)(nil)
