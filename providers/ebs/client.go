package ebs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Defaults and limits.
const (
	// MaxPageSize and MinPageSize bound DescribeVolumes' MaxResults, as EC2's
	// reference documents it ("between 5 and 500"; more returns 500);
	// MaxPageSize is the default.
	MaxPageSize = 500
	MinPageSize = 5
	// DefaultRequestsPerSecond and DefaultBurst stay well under EC2's bucket
	// for non-mutating actions (100 burst, 20 a second refill), which the
	// account's other clients draw from too.
	DefaultRequestsPerSecond = 10
	DefaultBurst             = 20
	// DefaultDeletesPerSecond and DefaultDeleteBurst pace DeleteVolume and
	// CreateSnapshot.
	DefaultDeletesPerSecond = 2
	DefaultDeleteBurst      = 5
	DefaultMaxAttempts      = 10
	// QuotasServiceCode is EBS's service code in Service Quotas.
	QuotasServiceCode = "ebs"
)

// Operation names, the keys of Calls.
const (
	OpDescribeVolumes   = "DescribeVolumes"
	OpDeleteVolume      = "DeleteVolume"
	OpDescribeSnapshots = "DescribeSnapshots"
	OpCreateSnapshot    = "CreateSnapshot"
	OpDeleteSnapshot    = "DeleteSnapshot"
	OpDescribeImages    = "DescribeImages"
	OpListRecycleBin    = "ListSnapshotsInRecycleBin"
	OpListServiceQuotas = "ListServiceQuotas"
)

// EC2 error codes this package acts on.
const (
	codeVolumeNotFound = "InvalidVolume.NotFound"
	codeVolumeInUse    = "VolumeInUse"
	codeIncorrectState = "IncorrectState"
)

// Options configures one account and region's client.
type Options struct {
	// Service is the account (12-digit id, required), region, identity,
	// EC2's endpoint (empty: the SDK's standard configuration decides,
	// AWS_ENDPOINT_URL_EC2 included), retries and logger; RequestsPerSecond
	// and Burst are the bucket of DescribeVolumes (default 10 and 20) and,
	// separately, of ListServiceQuotas.
	awsclient.Service
	// QuotasEndpoint overrides Service Quotas' endpoint ("": the SDK's,
	// AWS_ENDPOINT_URL_SERVICE_QUOTAS included).
	QuotasEndpoint string
	// PageSize is DescribeVolumes' MaxResults: 5..500, default 500.
	PageSize int32
	// DeletesPerSecond and DeleteBurst are the bucket of the mutating calls,
	// DeleteVolume, CreateSnapshot and DeleteSnapshot; default 2 and 5.
	DeletesPerSecond float64
	DeleteBurst      int
}

func (o *Options) defaults() error {
	errs := o.Check("account", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if err := awsclient.CheckPageSize(&o.PageSize, MinPageSize, MaxPageSize, "EC2's DescribeVolumes"); err != nil {
		errs = append(errs, err)
	}
	awsclient.DefaultDeletes(&o.DeletesPerSecond, &o.DeleteBurst, DefaultDeletesPerSecond, DefaultDeleteBurst)
	return errors.Join(errs...)
}

// Client is one account's EBS volumes and quotas in one region.
type Client struct {
	awsclient.Scope
	api      API
	quotas   QuotasAPI
	pageSize int32
	awsclient.Paced
}

// New builds the SDK clients (EC2 and Service Quotas): config.LoadDefaultConfig
// with the region and profile, an optional assumed role, the adaptive retry
// mode and the client-side token buckets. It calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	c, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	var setup awsclient.Client
	if setup, c.api, err = c.OpenEC2(ctx, o.Service, "ebs", o.DeletesPerSecond, o.DeleteBurst, "ReclaimEBSPace", OpDeleteVolume, OpCreateSnapshot, OpDeleteSnapshot); err != nil {
		return nil, err
	}
	// Service Quotas has a bucket of its own (setup.Pace): its rate limits
	// are not EC2's.
	c.quotas = servicequotas.NewFromConfig(setup.Config, func(qo *servicequotas.Options) {
		if o.QuotasEndpoint != "" {
			qo.BaseEndpoint = aws.String(o.QuotasEndpoint)
		}
		qo.Retryer = setup.Retryer
		qo.APIOptions = append(qo.APIOptions, setup.Pace, awsclient.AfterRetry(c.Count("ReclaimEBSCount")))
	})
	return c, nil
}

// NewWithAPI wraps an EC2 API and a Service Quotas API (decorated SDK
// clients, test doubles) as a Client. Rate limits, retries, credentials and
// call counting are then theirs; the listing options apply.
func NewWithAPI(api API, quotas QuotasAPI, o Options) (*Client, error) {
	c, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	c.api, c.quotas = api, quotas
	return c, nil
}

// newClient fills o's defaults and checks it, and makes a client of it
// with no API yet.
func newClient(o *Options) (*Client, error) {
	if err := o.defaults(); err != nil {
		return nil, fmt.Errorf("ebs %s/%s: %w", o.Account, o.Region, err)
	}
	return &Client{Scope: awsclient.NewScope(o.Account, o.Region), pageSize: o.PageSize}, nil
}

// ---- errors ----

// errRefused and errChanged mark a delete EC2 answered and did not do
// (outcome.Refused, outcome.Changed).
var (
	errRefused = outcome.MarkRefused(errors.New("refused"))
	errChanged = outcome.MarkChanged(errors.New("changed"))
)

// explain renders an API error for an operator (awsclient.Explain).
func (c *Client) explain(service, op, what string, err error, also ...error) error {
	call := awsclient.Call{Service: service, Op: op, Account: c.Account(), Region: c.Region(), What: what}
	if op == OpCreateSnapshot {
		call.GrantAlso = " (and ec2:CreateTags for the snapshot's tags)"
	}
	return awsclient.Explain(call, err, also...)
}

// ---- List and Volume ----

// List lists every volume of the account and region (DescribeVolumes in
// pages of PageSize, through the SDK's paginator). It never returns an
// error: a failed page makes the listing incomplete, with a Problem naming
// what to grant or fix, and keeps the volumes seen before it.
func (c *Client) List(ctx context.Context) Listing {
	l := Listing{Account: c.Account(), Region: c.Region(), Complete: true}
	p := ec2.NewDescribeVolumesPaginator(c.api, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(c.pageSize)})
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			l.Complete = false
			l.Problem = fmt.Sprintf("%v (%d volumes seen before it; the others are unknown)",
				c.explain("ec2", OpDescribeVolumes, fmt.Sprintf("page %d", page), err), len(l.Volumes))
			return l
		}
		for i := range res.Volumes {
			l.Volumes = append(l.Volumes, convertVolume(&res.Volumes[i]))
		}
	}
	return l
}

// Volume re-reads one volume (DescribeVolumes with VolumeIds, which EC2
// fails with InvalidVolume.NotFound when the volume does not exist: the
// error then wraps outcome.ErrNotFound).
func (c *Client) Volume(ctx context.Context, id string) (Volume, error) {
	if id == "" {
		return Volume{}, fmt.Errorf("ec2 %s %s/%s: empty volume id", OpDescribeVolumes, c.Account(), c.Region())
	}
	res, err := c.api.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{id}})
	if err != nil {
		if awsclient.ErrorCode(err) == codeVolumeNotFound {
			return Volume{}, c.explain("ec2", OpDescribeVolumes, id, err, outcome.ErrNotFound)
		}
		return Volume{}, c.explain("ec2", OpDescribeVolumes, id, err)
	}
	for i := range res.Volumes {
		if aws.ToString(res.Volumes[i].VolumeId) == id {
			return convertVolume(&res.Volumes[i]), nil
		}
	}
	return Volume{}, fmt.Errorf("ec2 %s %s/%s %s: not in the answer: %w", OpDescribeVolumes, c.Account(), c.Region(), id, outcome.ErrNotFound)
}

func convertVolume(v *types.Volume) Volume {
	out := Volume{
		ID:          aws.ToString(v.VolumeId),
		AZ:          aws.ToString(v.AvailabilityZone),
		State:       string(v.State),
		Type:        string(v.VolumeType),
		SizeGiB:     int64(aws.ToInt32(v.Size)),
		Created:     aws.ToTime(v.CreateTime),
		SnapshotID:  aws.ToString(v.SnapshotId),
		MultiAttach: aws.ToBool(v.MultiAttachEnabled),
	}
	if len(v.Tags) > 0 {
		out.Tags = make(map[string]string, len(v.Tags))
		for _, t := range v.Tags {
			out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	for _, a := range v.Attachments {
		if in := aws.ToString(a.InstanceId); in != "" {
			out.Attachments = append(out.Attachments, in)
		}
	}
	return out
}

// ---- delete and snapshot ----

// DeleteVolume deletes one volume (DeleteVolume, paced by the mutating
// bucket; the SDK retries a 5xx or a lost answer like any call). Its error
// says the delete's outcome (outcome.Of): a volume that does not
// exist (InvalidVolume.NotFound, also after a retry of a delete whose answer
// was lost) wraps outcome.ErrNotFound, gone; attached or not available
// (VolumeInUse, IncorrectState) is outcome.Changed; any other answer of
// EC2's with a 4xx status is outcome.Refused; no answer, a 5xx or
// throttling after the retries is left unknown.
func (c *Client) DeleteVolume(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("ec2 %s %s/%s: empty volume id", OpDeleteVolume, c.Account(), c.Region())
	}
	_, err := c.api.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(id)})
	if err == nil {
		return nil
	}
	switch awsclient.ErrorCode(err) {
	case codeVolumeNotFound:
		return c.explain("ec2", OpDeleteVolume, id, err, outcome.ErrNotFound)
	case codeVolumeInUse, codeIncorrectState:
		return c.explain("ec2", OpDeleteVolume, id, err, errChanged)
	}
	if awsclient.Refusal(err) {
		return c.explain("ec2", OpDeleteVolume, id, err, errRefused)
	}
	return c.explain("ec2", OpDeleteVolume, id, err) // no answer: unknown
}

// CreateSnapshot starts a snapshot of a volume, tagged on creation
// (TagSpecifications, ResourceType snapshot; the principal then needs
// ec2:CreateTags besides ec2:CreateSnapshot), and returns its id. It is
// paced by the mutating bucket.
//
// The snapshot is pending when this returns: EBS snapshots are
// asynchronous. EC2's API reference (CreateSnapshot) says the volume "may"
// be remounted and used while the snapshot is pending, and the snapshot
// captures the data written when it was started; it does not say, on that
// page or DeleteVolume's, that deleting the volume while a snapshot of it is
// pending is safe. Until that is confirmed, callers should wait for the
// snapshot to be completed before they delete the volume.
func (c *Client) CreateSnapshot(ctx context.Context, volumeID, description string, tags map[string]string) (string, error) {
	if volumeID == "" {
		return "", fmt.Errorf("ec2 %s %s/%s: empty volume id", OpCreateSnapshot, c.Account(), c.Region())
	}
	in := &ec2.CreateSnapshotInput{VolumeId: aws.String(volumeID)}
	if description != "" {
		in.Description = aws.String(description)
	}
	if len(tags) > 0 {
		spec := types.TagSpecification{ResourceType: types.ResourceTypeSnapshot}
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			spec.Tags = append(spec.Tags, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
		}
		in.TagSpecifications = []types.TagSpecification{spec}
	}
	res, err := c.api.CreateSnapshot(ctx, in)
	if err != nil {
		if awsclient.ErrorCode(err) == codeVolumeNotFound {
			return "", c.explain("ec2", OpCreateSnapshot, volumeID, err, outcome.ErrNotFound)
		}
		return "", c.explain("ec2", OpCreateSnapshot, volumeID, err)
	}
	return aws.ToString(res.SnapshotId), nil
}

// Snapshot is one of the account's snapshots.
type Snapshot struct {
	ID, VolumeID string
	// State: pending, completed, error (recoverable, recovering).
	State       string
	Started     time.Time
	Description string
	// SizeGiB is the size of the volume it was made from (VolumeSize): what
	// a full copy holds, an upper bound of what it is billed for.
	SizeGiB int64
	// StorageTier is standard or archive.
	StorageTier string
	Tags        map[string]string
}

// SnapshotsOf lists the account's own snapshots of a volume that carry the
// tag key=volumeID (DescribeSnapshots, owner self, every page): the ones
// reclaim made of it before deleting it, so a later run finds one started
// earlier instead of starting another.
func (c *Client) SnapshotsOf(ctx context.Context, volumeID, tagKey string) ([]Snapshot, error) {
	in := &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"}, Filters: []types.Filter{
		{Name: aws.String("volume-id"), Values: []string{volumeID}},
		{Name: aws.String("tag:" + tagKey), Values: []string{volumeID}}}}
	var out []Snapshot
	p := ec2.NewDescribeSnapshotsPaginator(c.api, in)
	for p.HasMorePages() {
		res, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.explain("ec2", OpDescribeSnapshots, volumeID, err)
		}
		for i := range res.Snapshots {
			out = append(out, convertSnapshot(&res.Snapshots[i]))
		}
	}
	return out, nil
}

// ---- quotas ----

// storageQuota matches the names of EBS's storage quotas, "Storage for
// General Purpose SSD (gp3) volumes, in TiB", capturing the volume type and
// the unit. Published listings also show the names without the comma
// ("… (sc1) volumes in TiB"); both are taken. "Storage modifications for …"
// is a different quota and does not match.
var storageQuota = regexp.MustCompile(`^Storage for .*\(([a-z0-9]+)\) volumes,? in (TiB|GiB)$`)

// Quotas reads the account's EBS storage quotas in the region
// (ListServiceQuotas, service code ebs, every page) and keeps the "Storage
// for … volumes, in TiB" ones, with their limit in GiB. Other EBS quotas
// (snapshots, IOPS, request rates) are left out.
func (c *Client) Quotas(ctx context.Context) ([]Quota, error) {
	if c.quotas == nil {
		return nil, fmt.Errorf("servicequotas %s %s/%s: no Service Quotas client", OpListServiceQuotas, c.Account(), c.Region())
	}
	var out []Quota
	p := servicequotas.NewListServiceQuotasPaginator(c.quotas, &servicequotas.ListServiceQuotasInput{ServiceCode: aws.String(QuotasServiceCode)})
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			return out, c.explain("servicequotas", OpListServiceQuotas, fmt.Sprintf("page %d", page), err)
		}
		for _, q := range res.Quotas {
			name := aws.ToString(q.QuotaName)
			m := storageQuota.FindStringSubmatch(name)
			if m == nil || q.Value == nil {
				continue
			}
			gib := *q.Value
			if m[2] == "TiB" {
				gib *= 1024
			}
			out = append(out, Quota{Account: c.Account(), Region: c.Region(),
				Code: aws.ToString(q.QuotaCode), Name: name, VolumeType: m[1], LimitGiB: gib})
		}
	}
	return out, nil
}
