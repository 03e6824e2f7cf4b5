package ecr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecr/types"

	"reclaim.dev/reclaim/base/optout"
	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Defaults and limits.
const (
	// MaxPageSize is DescribeRepositories' and DescribeImages' largest maxResults, the default.
	MaxPageSize = 1000
	// MaxBatch is the most image ids BatchDeleteImage, BatchGetImage and
	// DescribeImages take in one call.
	MaxBatch                 = 100
	DefaultRequestsPerSecond = 20
	DefaultMaxAttempts       = 10
	DefaultConcurrency       = 8
)

// acceptedMediaTypes is what BatchGetImage may answer with: without the
// index types ECR converts an index to one of its platform manifests.
var acceptedMediaTypes = []string{
	inventory.MediaTypeOCIIndex,
	inventory.MediaTypeDockerList,
	inventory.MediaTypeOCIManifest,
	inventory.MediaTypeDockerManifest,
	inventory.MediaTypeDockerManifestV1,
	inventory.MediaTypeDockerManifestV1s,
}

// Options configures one registry's client.
type Options struct {
	// Service is the registry's account (its registryId, required) and
	// region, identity, endpoint (empty: the SDK's standard configuration
	// decides, AWS_ENDPOINT_URL_ECR included) and retries; RequestsPerSecond
	// is the token bucket every attempt of an operation waits on, one per
	// operation as ECR's quotas are, default 20, Burst defaulting to
	// ceil(RequestsPerSecond).
	awsclient.Service
	// PageSize is DescribeRepositories' and DescribeImages' maxResults;
	// default and maximum 1000.
	PageSize int32
	// Concurrency is how many repositories List lists in parallel; default 8.
	Concurrency int
	// ProtectTag is a repository resource tag key; with any value it opts
	// the repository out (RepoListing.Protected, package optout).
	ProtectTag string
	// OwnerTag is a repository resource tag key whose value names the
	// repository's owner (RepoListing.Labels). With both "",
	// ListTagsForResource is not called.
	OwnerTag string
}

func (o *Options) defaults() error {
	errs := o.Check("account (registryId)", DefaultRequestsPerSecond, 0, DefaultMaxAttempts)
	if o.PageSize <= 0 || o.PageSize > MaxPageSize {
		o.PageSize = MaxPageSize
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return errors.Join(errs...)
}

// Client is one registry: an account's ECR in one region.
type Client struct {
	awsclient.Reader[API]
	pageSize    int32
	protectTag  string
	ownerTag    string
	maxAttempts int
	// owners shares one {ownerTag: value} map per owner between repositories.
	owners inventory.OwnerLabels
}

// New builds the SDK client: config.LoadDefaultConfig with the region and
// profile, an optional assumed role, the adaptive retry mode and the
// client-side rate limiter. It does not call the API (an assumed role's
// credentials are fetched on the first call).
func New(ctx context.Context, o Options) (*Client, error) {
	if err := o.defaults(); err != nil {
		return nil, fmt.Errorf("ecr %s/%s: %w", o.Account, o.Region, err)
	}
	setup, err := o.Load(ctx, "ecr", DefaultRequestsPerSecond, 0, DefaultMaxAttempts)
	if err != nil {
		return nil, err
	}
	api := ecr.NewFromConfig(setup.Config, func(eo *ecr.Options) {
		// ECR's rate quotas are per API action.
		setup.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, setup.PaceEach)
	})
	return NewWithAPI(api, o)
}

// NewWithAPI wraps an API (a decorated *ecr.Client, a test double) as a
// Client. The rate limit, retry and credential options are then the API's
// business; the listing options apply.
func NewWithAPI(api API, o Options) (*Client, error) {
	if err := o.defaults(); err != nil {
		return nil, fmt.Errorf("ecr %s/%s: %w", o.Account, o.Region, err)
	}
	return &Client{
		Reader:      awsclient.NewReader(api, awsclient.ReaderOptions{Service: o.Service, Concurrency: o.Concurrency}, DefaultConcurrency),
		pageSize:    o.PageSize,
		protectTag:  o.ProtectTag,
		ownerTag:    o.OwnerTag,
		owners:      inventory.OwnerLabels{Key: o.OwnerTag},
		maxAttempts: o.MaxAttempts,
	}, nil
}

// ---- errors ----

// explain renders an API error for an operator (awsclient.Explain); a
// repository that is not there wraps outcome.ErrNotFound.
func (c *Client) explain(op, what string, err error) error {
	var also []error
	if awsclient.ErrorCode(err) == "RepositoryNotFoundException" {
		also = append(also, outcome.ErrNotFound)
	}
	return awsclient.Explain(awsclient.Call{Service: "ecr", Op: op, Account: c.Account(), Region: c.Region(), What: what,
		ThrottleAlso: " (ECR's quotas are per API action) or ask AWS to raise the ECR API quota"}, err, also...)
}

// ---- List ----

// List lists the registry: every repository (DescribeRepositories), and per
// repository, lazily (its RepoListing.Load, on the first Ensure), its
// protect tag (ListTagsForResource, when ProtectTag is set), its images
// (DescribeImages) and the children of every index (BatchGetImage, up to 100
// per call). A Load also starts listing the repositories after it, up to
// Concurrency at once, so that a plan reading them in order seldom waits and
// holds only those few besides its own (ListAll lists every one now).
//
// It never returns an error. A failed repository listing makes the registry
// incomplete; a failed image page or an unreadable index makes that
// repository incomplete, keeping every image seen. A repository deleted
// while it is listed (RepositoryNotFoundException) is Gone.
//
// Reading an index with BatchGetImage counts as a pull: ECR updates the
// index's lastRecordedPullTime (aws/containers-roadmap#2390) unless the
// caller's principal is registered with RegisterPullTimeUpdateExclusion. The
// LastPull this listing reports was read before, by DescribeImages.
func (c *Client) List(ctx context.Context) inventory.RegistryListing {
	l := inventory.RegistryListing{Account: c.Account(), Region: c.Region(), Complete: true}
	l.Pullers, l.PullersProblem = c.registryPullers(ctx)
	type repo struct {
		name, arn string
		created   time.Time
	}
	var repos []repo
	p := ecr.NewDescribeRepositoriesPaginator(c.API(), &ecr.DescribeRepositoriesInput{
		RegistryId: aws.String(c.Account()),
		MaxResults: aws.Int32(c.pageSize),
	})
	for page := 1; p.HasMorePages(); page++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			l.Complete = false
			l.Problem = fmt.Sprintf("%v (page %d; %d repositories seen before it)", c.explain("DescribeRepositories", "registry "+c.Account(), err), page, len(repos))
			break
		}
		for _, r := range out.Repositories {
			name := aws.ToString(r.RepositoryName)
			if name == "" {
				continue
			}
			repos = append(repos, repo{name: name, arn: aws.ToString(r.RepositoryArn), created: aws.ToTime(r.CreatedAt)})
		}
	}

	lz := &lazyRepos{results: make([]chan inventory.RepoListing, len(repos)), taken: make([]bool, len(repos)), window: max(1, c.Concurrency()) + 1}
	lz.list = func(i int) inventory.RepoListing {
		rl, gone := c.listRepo(ctx, repos[i].name, repos[i].arn)
		rl.Gone = gone
		if gone {
			rl.Images, rl.Complete, rl.Problem = inventory.ImageTable{}, true, ""
		}
		return rl
	}
	l.Repos = make([]inventory.RepoListing, len(repos))
	for i, r := range repos {
		l.Repos[i] = inventory.RepoListing{Repo: inventory.RepoKey{Account: c.Account(), Region: c.Region(), Name: r.name}, Created: r.created,
			Load: func(rl *inventory.RepoListing) { lz.load(i, rl) }}
	}
	// The first ones are listed while the clusters are read.
	lz.mu.Lock()
	lz.start(0)
	lz.mu.Unlock()
	return l
}

// ListAll is List with every repository listed now (Concurrency at once).
func (c *Client) ListAll(ctx context.Context) inventory.RegistryListing {
	l := c.List(ctx)
	l.EnsureAll()
	return l
}

// lazyRepos lists a registry's repositories as they are asked for, with
// the next window-1 in flight meanwhile. A listing is handed over once and
// not kept (the plan drops it when planned); a copy of the RepoListing that
// asks again gets a new listing, never an empty one.
type lazyRepos struct {
	list    func(i int) inventory.RepoListing
	window  int
	mu      sync.Mutex
	results []chan inventory.RepoListing // nil: not started
	taken   []bool
}

// start lists repositories i to i+window-1 that are not yet (lz.mu held).
func (lz *lazyRepos) start(i int) {
	for j := i; j < min(len(lz.results), i+lz.window); j++ {
		if lz.results[j] == nil {
			ch := make(chan inventory.RepoListing, 1)
			lz.results[j] = ch
			go func() { ch <- lz.list(j) }()
		}
	}
}

func (lz *lazyRepos) load(i int, rl *inventory.RepoListing) {
	lz.mu.Lock()
	lz.start(i)
	ch, again := lz.results[i], lz.taken[i]
	lz.taken[i] = true
	lz.mu.Unlock()
	var got inventory.RepoListing
	if again {
		got = lz.list(i)
	} else {
		got = <-ch
	}
	rl.Protected, rl.Labels, rl.Images, rl.Complete, rl.Problem, rl.Gone = got.Protected, got.Labels, got.Images, got.Complete, got.Problem, got.Gone
	rl.Pullers = got.Pullers
}

// registryPullers reads the registry's permissions policy (with registry
// policy scope V2 it may grant pulls of every repository): who it lets
// pull, or why that is unknown.
func (c *Client) registryPullers(ctx context.Context) ([]string, string) {
	// GetRegistryPolicy reads the caller's registry: credentials of another
	// account would read that account's policy, or find none.
	out, err := c.API().GetRegistryPolicy(ctx, &ecr.GetRegistryPolicyInput{})
	switch {
	case awsclient.ErrorCode(err) == "RegistryPolicyNotFoundException":
		if m := notFoundRegistry.FindStringSubmatch(err.Error()); m != nil && m[1] != c.Account() {
			return nil, c.otherRegistry(m[1])
		}
		return nil, ""
	case err != nil:
		return nil, c.explain("GetRegistryPolicy", "registry "+c.Account(), err).Error()
	}
	if id := aws.ToString(out.RegistryId); id != "" && id != c.Account() {
		return nil, c.otherRegistry(id)
	}
	ps, err := PolicyPullers(aws.ToString(out.PolicyText), c.Account())
	if err != nil {
		return nil, "the registry policy: " + err.Error()
	}
	return ps, ""
}

// notFoundRegistry is the registry ECR names when it has no policy.
var notFoundRegistry = regexp.MustCompile(`registry with id '(\d{12})'`)

// otherRegistry is why the registry's pullers are unknown when the policy
// read was another account's.
func (c *Client) otherRegistry(id string) string {
	return fmt.Sprintf("the registry policy read is account %s's, not %s's: the credentials are in another account, so who may pull from registry %s is unknown (give it a profile or roleARN in %s)",
		id, c.Account(), c.Account(), c.Account())
}

// repoPullers reads a repository's policy: who it lets pull.
func (c *Client) repoPullers(ctx context.Context, name string) (ps []string, gone bool, problem string) {
	out, err := c.API().GetRepositoryPolicy(ctx, &ecr.GetRepositoryPolicyInput{RegistryId: aws.String(c.Account()), RepositoryName: aws.String(name)})
	switch code := awsclient.ErrorCode(err); {
	case code == "RepositoryPolicyNotFoundException":
		return nil, false, ""
	case code == "RepositoryNotFoundException":
		return nil, true, ""
	case err != nil:
		return nil, false, fmt.Sprintf("%v (who may pull from it is unknown)", c.explain("GetRepositoryPolicy", c.Account()+"/"+name, err))
	}
	ps, err = PolicyPullers(aws.ToString(out.PolicyText), c.Account())
	if err != nil {
		return nil, false, fmt.Sprintf("%s: %v (who may pull from it is unknown)", name, err)
	}
	return ps, false, ""
}

func (c *Client) repoARN(name string) string {
	part := "aws"
	switch {
	case strings.HasPrefix(c.Region(), "cn-"):
		part = "aws-cn"
	case strings.HasPrefix(c.Region(), "us-gov-"):
		part = "aws-us-gov"
	}
	return "arn:" + part + ":ecr:" + c.Region() + ":" + c.Account() + ":repository/" + name
}

// listRepo lists one repository; gone is true when it no longer exists.
// tagKeys names the tags a repository's listing reads, for messages.
func (c *Client) tagKeys() string {
	var ks []string
	for _, k := range []string{c.protectTag, c.ownerTag} {
		if k != "" {
			ks = append(ks, strconv.Quote(k))
		}
	}
	return strings.Join(ks, " and ")
}

func (c *Client) listRepo(ctx context.Context, name, arn string) (rl inventory.RepoListing, gone bool) {
	rl = inventory.RepoListing{Repo: inventory.RepoKey{Account: c.Account(), Region: c.Region(), Name: name}, Complete: true}
	var problems []string
	fail := func(p string) {
		rl.Complete = false
		problems = append(problems, p)
	}
	defer func() { rl.Problem = strings.Join(problems, "; ") }()

	if c.protectTag != "" || c.ownerTag != "" {
		if arn == "" {
			arn = c.repoARN(name)
		}
		tags, err := c.tagsOf(ctx, arn)
		switch {
		case awsclient.ErrorCode(err) == "RepositoryNotFoundException":
			return rl, true
		case err != nil:
			// Unknown protection or owner: never trim this repository (an
			// owner unknown would make another's report its notice).
			fail(fmt.Sprintf("%v (the repository's tags %s are unknown)", c.explain("ListTagsForResource", arn, err), c.tagKeys()))
		default:
			_, rl.Protected = optout.Protects(c.protectTag, tags)
			if v := tags[c.ownerTag]; c.ownerTag != "" && v != "" {
				rl.Labels = c.owners.Of(v)
			}
		}
	}

	ps, gone, problem := c.repoPullers(ctx, name)
	if gone {
		return rl, true
	} else if problem != "" {
		fail(problem)
	}
	rl.Pullers = ps

	p := ecr.NewDescribeImagesPaginator(c.API(), &ecr.DescribeImagesInput{
		RegistryId:     aws.String(c.Account()),
		RepositoryName: aws.String(name),
		MaxResults:     aws.Int32(c.pageSize),
	})
	var indexes []int
	for page := 1; p.HasMorePages(); page++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			if awsclient.ErrorCode(err) == "RepositoryNotFoundException" {
				return rl, true
			}
			fail(fmt.Sprintf("%v (page %d; %d images seen before it)", c.explain("DescribeImages", rl.Repo.String(), err), page, rl.Images.Len()))
			break
		}
		for i := range out.ImageDetails {
			im, err := convertImage(&out.ImageDetails[i])
			if err != nil {
				fail(fmt.Sprintf("DescribeImages %s: %v", rl.Repo, err))
				continue
			}
			if im.IsIndex() {
				indexes = append(indexes, rl.Images.Len())
			}
			rl.Images.Add(im)
		}
	}
	rl.Images.Trim()
	for start := 0; start < len(indexes); start += MaxBatch {
		chunk := indexes[start:min(start+MaxBatch, len(indexes))]
		if gone, err := c.readIndexes(ctx, &rl, chunk); gone {
			return rl, true
		} else if err != "" {
			fail(err)
		}
	}
	return rl, false
}

// readIndexes reads the bodies of rl.Images[idx...] (indexes) with one
// BatchGetImage and sets their Children. It returns a problem for anything it
// could not read.
func (c *Client) readIndexes(ctx context.Context, rl *inventory.RepoListing, idx []int) (gone bool, problem string) {
	ids := make([]types.ImageIdentifier, len(idx))
	byDigest := make(map[string]int, len(idx))
	for i, j := range idx {
		d := rl.Images.Digest(j)
		ids[i] = types.ImageIdentifier{ImageDigest: aws.String(d)}
		byDigest[d] = j
	}
	out, err := c.API().BatchGetImage(ctx, &ecr.BatchGetImageInput{
		RegistryId:         aws.String(c.Account()),
		RepositoryName:     aws.String(rl.Repo.Name),
		ImageIds:           ids,
		AcceptedMediaTypes: acceptedMediaTypes,
	})
	if err != nil {
		if awsclient.ErrorCode(err) == "RepositoryNotFoundException" {
			return true, ""
		}
		return false, fmt.Sprintf("%v (children of %d indexes unknown)", c.explain("BatchGetImage", rl.Repo.String(), err), len(idx))
	}
	var problems []string
	for _, im := range out.Images {
		d := aws.ToString(im.ImageId.ImageDigest)
		j, ok := byDigest[d]
		if !ok {
			continue
		}
		delete(byDigest, d)
		if mt := aws.ToString(im.ImageManifestMediaType); !inventory.IsIndex(mt) {
			problems = append(problems, fmt.Sprintf("index %s: BatchGetImage returned a %q body instead of the index", d, mt))
			continue
		}
		ch, err := indexChildren(aws.ToString(im.ImageManifest))
		if err != nil {
			problems = append(problems, fmt.Sprintf("index %s: unreadable body: %v", d, err))
			continue
		}
		rl.Images.SetChildren(j, ch, true)
	}
	for _, f := range out.Failures {
		d := ""
		if f.ImageId != nil {
			d = aws.ToString(f.ImageId.ImageDigest)
		}
		delete(byDigest, d)
		problems = append(problems, fmt.Sprintf("index %s: BatchGetImage failure %s: %s", d, f.FailureCode, aws.ToString(f.FailureReason)))
	}
	if len(byDigest) > 0 {
		problems = append(problems, fmt.Sprintf("BatchGetImage left %d indexes unanswered", len(byDigest)))
	}
	if len(problems) == 0 {
		return false, ""
	}
	return false, fmt.Sprintf("BatchGetImage %s: %s (their children are unknown)", rl.Repo, strings.Join(problems, "; "))
}

// indexChildren parses an image index / manifest list body: manifests[].digest.
func indexChildren(body string) ([]string, error) {
	var idx struct {
		Manifests *[]struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(body), &idx); err != nil {
		return nil, err
	}
	if idx.Manifests == nil {
		return nil, errors.New("no manifests list")
	}
	out := make([]string, 0, len(*idx.Manifests))
	for i, m := range *idx.Manifests {
		if !strings.Contains(m.Digest, ":") {
			return nil, fmt.Errorf("manifests[%d]: bad digest %q", i, m.Digest)
		}
		out = append(out, m.Digest)
	}
	return out, nil
}

// convertImage converts an image as DescribeImages describes it. Its
// strings point into the SDK's response buffers: a listing keeps them only
// through ImageTable.Add, which copies what it keeps (a known media type as
// a code).
func convertImage(d *types.ImageDetail) (inventory.Image, error) {
	im := inventory.Image{
		Digest:    aws.ToString(d.ImageDigest),
		Tags:      d.ImageTags,
		PushedAt:  aws.ToTime(d.ImagePushedAt),
		LastPull:  aws.ToTime(d.LastRecordedPullTime),
		SizeBytes: aws.ToInt64(d.ImageSizeInBytes),
		MediaType: aws.ToString(d.ImageManifestMediaType),
	}
	if im.Digest == "" {
		return im, fmt.Errorf("an image without a digest (tags %v): skipped", d.ImageTags)
	}
	if im.PushedAt.IsZero() {
		// An unknown age must not read as "very old".
		return im, fmt.Errorf("image %s has no imagePushedAt: skipped", im.Digest)
	}
	return im, nil
}

// ---- DescribeImages ----

// DescribeImages re-reads images by digest before they are deleted
// (DescribeImages with imageIds, at most 100 per call). Images that no longer
// exist are absent from the result. Real ECR fails the whole call with
// ImageNotFoundException when any id is missing; then the chunk is described
// one digest at a time. Children of indexes are not read (a digest's body
// never changes). A missing repository is an error wrapping outcome.ErrNotFound.
func (c *Client) DescribeImages(ctx context.Context, repo string, digests []string) ([]inventory.Image, error) {
	digests = awsclient.Unique(digests)
	var out []inventory.Image
	for start := 0; start < len(digests); start += MaxBatch {
		chunk := digests[start:min(start+MaxBatch, len(digests))]
		got, err := c.describe(ctx, repo, chunk)
		if awsclient.ErrorCode(err) == "ImageNotFoundException" {
			got = got[:0]
			for _, d := range chunk {
				one, err := c.describe(ctx, repo, []string{d})
				if awsclient.ErrorCode(err) == "ImageNotFoundException" {
					continue
				}
				if err != nil {
					return nil, c.explain("DescribeImages", repo+"@"+d, err)
				}
				got = append(got, one...)
			}
		} else if err != nil {
			return nil, c.explain("DescribeImages", repo, err)
		}
		out = append(out, got...)
	}
	return out, nil
}

func (c *Client) describe(ctx context.Context, repo string, digests []string) ([]inventory.Image, error) {
	ids := make([]types.ImageIdentifier, len(digests))
	for i, d := range digests {
		ids[i] = types.ImageIdentifier{ImageDigest: aws.String(d)}
	}
	res, err := c.API().DescribeImages(ctx, &ecr.DescribeImagesInput{
		RegistryId:     aws.String(c.Account()),
		RepositoryName: aws.String(repo),
		ImageIds:       ids,
	})
	if err != nil {
		return nil, err
	}
	out := make([]inventory.Image, 0, len(res.ImageDetails))
	for i := range res.ImageDetails {
		im, err := convertImage(&res.ImageDetails[i])
		if err != nil {
			return nil, fmt.Errorf("ecr DescribeImages %s/%s %s: %w", c.Account(), c.Region(), repo, err)
		}
		out = append(out, im)
	}
	return out, nil
}

// RepoTags re-reads a repository's resource tags (ListTagsForResource), for
// the opt-out check right before a delete. A missing repository is an error
// wrapping outcome.ErrNotFound.
func (c *Client) RepoTags(ctx context.Context, repo string) (map[string]string, error) {
	arn := c.repoARN(repo)
	tags, err := c.tagsOf(ctx, arn)
	if awsclient.ErrorCode(err) == "RepositoryNotFoundException" {
		return nil, fmt.Errorf("repository %s: %w", repo, outcome.ErrNotFound)
	}
	if err != nil {
		return nil, c.explain("ListTagsForResource", arn, err)
	}
	return tags, nil
}

func (c *Client) tagsOf(ctx context.Context, arn string) (map[string]string, error) {
	out, err := c.API().ListTagsForResource(ctx, &ecr.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	tags := make(map[string]string, len(out.Tags))
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

// ---- DeleteImages ----

// DeleteImages deletes images by digest with one BatchDeleteImage; at most
// MaxBatch digests (more is an error, nothing is sent). It returns ECR's
// per-image failures, ImageNotFound included (the caller treats that image as
// gone). A whole-call error after retries is returned as the error; a missing
// repository wraps outcome.ErrNotFound.
func (c *Client) DeleteImages(ctx context.Context, repo string, digests []string) ([]inventory.ImageFailure, error) {
	if len(digests) > MaxBatch {
		return nil, fmt.Errorf("ecr BatchDeleteImage %s/%s %s: %d digests, at most %d per call", c.Account(), c.Region(), repo, len(digests), MaxBatch)
	}
	if len(digests) == 0 {
		return nil, nil
	}
	ids := make([]types.ImageIdentifier, len(digests))
	for i, d := range digests {
		if d == "" {
			return nil, fmt.Errorf("ecr BatchDeleteImage %s/%s %s: empty digest at %d", c.Account(), c.Region(), repo, i)
		}
		ids[i] = types.ImageIdentifier{ImageDigest: aws.String(d)}
	}
	out, err := c.API().BatchDeleteImage(ctx, &ecr.BatchDeleteImageInput{
		RegistryId:     aws.String(c.Account()),
		RepositoryName: aws.String(repo),
		ImageIds:       ids,
	})
	if err != nil {
		return nil, c.explain("BatchDeleteImage", repo, err)
	}
	var fails []inventory.ImageFailure
	for _, f := range out.Failures {
		var d string
		if f.ImageId != nil {
			d = aws.ToString(f.ImageId.ImageDigest)
		}
		fails = append(fails, inventory.ImageFailure{Digest: d, Code: string(f.FailureCode), Reason: aws.ToString(f.FailureReason)})
	}
	return fails, nil
}
