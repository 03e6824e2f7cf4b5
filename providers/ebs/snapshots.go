package ebs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Snapshot listing limits.
const (
	// MaxSnapshotPageSize is DescribeSnapshots' largest MaxResults (5..1000,
	// as EC2's reference documents it); the listing always asks for it.
	MaxSnapshotPageSize = 1000
	// MaxFilterValues is how many snapshot ids one filter of a
	// DescribeImages or DescribeVolumes call carries (EC2 documents 200
	// values a filter for its describes).
	MaxFilterValues = 200
)

// EC2 error codes of snapshots.
const (
	codeSnapshotNotFound = "InvalidSnapshot.NotFound"
	codeSnapshotInUse    = "InvalidSnapshot.InUse"
)

// SnapshotListing is one account and region's own snapshots. Complete is
// false when a page failed; Problem then says what an operator can do.
// Recycled are the snapshots in the Recycle Bin (deleted, retained by a
// rule, still billed); RecycleProblem says why they are unknown.
type SnapshotListing struct {
	Account, Region string
	Snapshots       []Snapshot
	Complete        bool
	Problem         string
	Recycled        []Recycled
	RecycleProblem  string
}

// Recycled is a snapshot in the Recycle Bin: it entered at Entered and is
// deleted for good at Exits.
type Recycled struct {
	ID, VolumeID, Description string
	Entered, Exits            time.Time
}

// ListSnapshots lists the account's own snapshots in the region
// (DescribeSnapshots, OwnerIds self, pages of 1000 through the SDK's
// paginator). It never returns an error: a failed page makes the listing
// incomplete and keeps the snapshots seen before it.
func (c *Client) ListSnapshots(ctx context.Context) SnapshotListing {
	l := SnapshotListing{Account: c.Account(), Region: c.Region(), Complete: true}
	p := ec2.NewDescribeSnapshotsPaginator(c.api, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"}, MaxResults: aws.Int32(MaxSnapshotPageSize)})
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			l.Complete = false
			l.Problem = fmt.Sprintf("%v (%d snapshots seen before it; the others are unknown)",
				c.explain("ec2", OpDescribeSnapshots, fmt.Sprintf("page %d", page), err), len(l.Snapshots))
			return l
		}
		for i := range res.Snapshots {
			l.Snapshots = append(l.Snapshots, convertSnapshot(&res.Snapshots[i]))
		}
	}
	l.Recycled, l.RecycleProblem = c.recycleBin(ctx)
	return l
}

// recycleBin lists the snapshots in the Recycle Bin (ListSnapshotsInRecycleBin,
// pages of 1000). They are reported, never deleted: a failure is a problem
// of its own, not an incomplete listing.
func (c *Client) recycleBin(ctx context.Context) ([]Recycled, string) {
	var out []Recycled
	p := ec2.NewListSnapshotsInRecycleBinPaginator(c.api, &ec2.ListSnapshotsInRecycleBinInput{MaxResults: aws.Int32(MaxSnapshotPageSize)})
	for page := 1; p.HasMorePages(); page++ {
		res, err := p.NextPage(ctx)
		if err != nil {
			return out, c.explain("ec2", OpListRecycleBin, fmt.Sprintf("page %d", page), err).Error()
		}
		for _, r := range res.Snapshots {
			out = append(out, Recycled{ID: aws.ToString(r.SnapshotId), VolumeID: aws.ToString(r.VolumeId), Description: aws.ToString(r.Description),
				Entered: aws.ToTime(r.RecycleBinEnterTime), Exits: aws.ToTime(r.RecycleBinExitTime)})
		}
	}
	return out, ""
}

// SnapshotByID re-reads one snapshot (DescribeSnapshots with SnapshotIds; an
// id EC2 does not know is InvalidSnapshot.NotFound, and the error then wraps
// outcome.ErrNotFound).
func (c *Client) SnapshotByID(ctx context.Context, id string) (Snapshot, error) {
	if id == "" {
		return Snapshot{}, fmt.Errorf("ec2 %s %s/%s: empty snapshot id", OpDescribeSnapshots, c.Account(), c.Region())
	}
	res, err := c.api.DescribeSnapshots(ctx, &ec2.DescribeSnapshotsInput{SnapshotIds: []string{id}})
	if err != nil {
		if awsclient.ErrorCode(err) == codeSnapshotNotFound {
			return Snapshot{}, c.explain("ec2", OpDescribeSnapshots, id, err, outcome.ErrNotFound)
		}
		return Snapshot{}, c.explain("ec2", OpDescribeSnapshots, id, err)
	}
	for i := range res.Snapshots {
		if aws.ToString(res.Snapshots[i].SnapshotId) == id {
			return convertSnapshot(&res.Snapshots[i]), nil
		}
	}
	return Snapshot{}, fmt.Errorf("ec2 %s %s/%s %s: not in the answer: %w", OpDescribeSnapshots, c.Account(), c.Region(), id, outcome.ErrNotFound)
}

func convertSnapshot(s *types.Snapshot) Snapshot {
	out := Snapshot{
		ID: aws.ToString(s.SnapshotId), VolumeID: aws.ToString(s.VolumeId), State: string(s.State),
		Started: aws.ToTime(s.StartTime), Description: aws.ToString(s.Description),
		SizeGiB: int64(aws.ToInt32(s.VolumeSize)), StorageTier: string(s.StorageTier),
	}
	if len(s.Tags) > 0 {
		out.Tags = make(map[string]string, len(s.Tags))
		for _, t := range s.Tags {
			out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	return out
}

// SnapshotUsers says, of each snapshot id, what depends on it: the
// account's AMIs registered from it (DescribeImages, Owners self,
// disabled and deprecated ones included, filter
// block-device-mapping.snapshot-id) and its volumes being created from it
// (DescribeVolumes, filters snapshot-id and status creating), as "AMI
// ami-…" and "volume vol-… being created from it". Ids go 200 to a call.
// Any failed call fails the whole answer: a use that could not be read is
// unknown, not none.
func (c *Client) SnapshotUsers(ctx context.Context, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for chunk := range slices.Chunk(ids, MaxFilterValues) {
		if err := c.imagesOf(ctx, chunk, out); err != nil {
			return nil, err
		}
		if err := c.volumesFrom(ctx, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Client) imagesOf(ctx context.Context, ids []string, out map[string][]string) error {
	in := &ec2.DescribeImagesInput{Owners: []string{"self"}, IncludeDisabled: aws.Bool(true), IncludeDeprecated: aws.Bool(true),
		MaxResults: aws.Int32(1000),
		Filters:    []types.Filter{{Name: aws.String("block-device-mapping.snapshot-id"), Values: ids}}}
	p := ec2.NewDescribeImagesPaginator(c.api, in)
	for p.HasMorePages() {
		res, err := p.NextPage(ctx)
		if err != nil {
			return c.explain("ec2", OpDescribeImages, "images of snapshots", err)
		}
		for _, im := range res.Images {
			for _, m := range im.BlockDeviceMappings {
				if m.Ebs == nil {
					continue
				}
				if id := aws.ToString(m.Ebs.SnapshotId); slices.Contains(ids, id) {
					out[id] = append(out[id], "AMI "+aws.ToString(im.ImageId))
				}
			}
		}
	}
	return nil
}

func (c *Client) volumesFrom(ctx context.Context, ids []string, out map[string][]string) error {
	in := &ec2.DescribeVolumesInput{MaxResults: aws.Int32(c.pageSize), Filters: []types.Filter{
		{Name: aws.String("snapshot-id"), Values: ids},
		{Name: aws.String("status"), Values: []string{"creating"}}}}
	p := ec2.NewDescribeVolumesPaginator(c.api, in)
	for p.HasMorePages() {
		res, err := p.NextPage(ctx)
		if err != nil {
			return c.explain("ec2", OpDescribeVolumes, "volumes being created from snapshots", err)
		}
		for _, v := range res.Volumes {
			id := aws.ToString(v.SnapshotId)
			out[id] = append(out[id], "volume "+aws.ToString(v.VolumeId)+" being created from it")
		}
	}
	return nil
}

// DeleteSnapshot deletes one snapshot (paced by the mutating bucket). Its
// error says the outcome (outcome.Of): InvalidSnapshot.NotFound is gone;
// InvalidSnapshot.InUse (an AMI is registered from it) is outcome.ErrInUse,
// a skip; another 4xx answer is refused; no answer is unknown.
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("ec2 %s %s/%s: empty snapshot id", OpDeleteSnapshot, c.Account(), c.Region())
	}
	_, err := c.api.DeleteSnapshot(ctx, &ec2.DeleteSnapshotInput{SnapshotId: aws.String(id)})
	if err == nil {
		return nil
	}
	switch awsclient.ErrorCode(err) {
	case codeSnapshotNotFound:
		return c.explain("ec2", OpDeleteSnapshot, id, err, outcome.ErrNotFound)
	case codeSnapshotInUse:
		return c.explain("ec2", OpDeleteSnapshot, id, err, outcome.ErrInUse)
	}
	if awsclient.Refusal(err) {
		return c.explain("ec2", OpDeleteSnapshot, id, err, errRefused)
	}
	return c.explain("ec2", OpDeleteSnapshot, id, err)
}

// ListSnapshots lists every account and region's own snapshots in parallel,
// in configuration order.
func (f *Fleet) ListSnapshots(ctx context.Context) []SnapshotListing {
	return awsclient.Map(&f.Fleet, func(c *Client) SnapshotListing { return c.ListSnapshots(ctx) })
}

// SnapshotByID re-reads one snapshot of an account and region.
func (f *Fleet) SnapshotByID(ctx context.Context, account, region, id string) (Snapshot, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return Snapshot{}, err
	}
	return c.SnapshotByID(ctx, id)
}

// SnapshotUsers says what depends on each snapshot of an account and region.
func (f *Fleet) SnapshotUsers(ctx context.Context, account, region string, ids []string) (map[string][]string, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return nil, err
	}
	return c.SnapshotUsers(ctx, ids)
}

// DeleteSnapshot deletes one snapshot of an account and region.
func (f *Fleet) DeleteSnapshot(ctx context.Context, account, region, id string) error {
	c, err := f.Lookup(account, region)
	if err != nil {
		return err
	}
	return c.DeleteSnapshot(ctx, id)
}
