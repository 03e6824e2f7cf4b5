package gce

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"

	"reclaim.dev/reclaim/base/outcome"
)

// ListSnapshots lists a project's snapshots (snapshots.list, pages of
// PageSize, at most 500). It never returns an error: a failed page makes
// the listing incomplete and keeps the snapshots seen before it.
func (c *Client) ListSnapshots(ctx context.Context, project string) SnapshotListing {
	l := SnapshotListing{Project: project, Complete: true}
	if project == "" {
		return SnapshotListing{Problem: "snapshots.list: empty project"}
	}
	it := c.snapshots.List(ctx, &computepb.ListSnapshotsRequest{Project: project, MaxResults: proto.Uint32(uint32(c.pageSize))}, c.readRetry...)
	// One InternalFetch is one API page of exactly PageSize, as in ListDisks.
	token := ""
	for page := 1; ; page++ {
		items, next, err := it.InternalFetch(c.pageSize, token)
		if err != nil {
			l.Complete = false
			l.Problem = fmt.Sprintf("snapshots.list %s: page %d failed (retries exhausted or not retryable); %d snapshots seen before it: %v%s",
				project, page, len(l.Snapshots), err, reasonSuffix(err))
			return l
		}
		for _, s := range items {
			l.Snapshots = append(l.Snapshots, convertSnapshot(s))
		}
		if next == "" {
			return l
		}
		if next == token {
			l.Complete = false
			l.Problem = fmt.Sprintf("snapshots.list %s: page %d returned its own page token again", project, page)
			return l
		}
		token = next
	}
}

func convertSnapshot(s *computepb.Snapshot) Snapshot {
	// An unreadable time stays zero: older than any orphan period, so never
	// reused; gce-snapshot holds what has none.
	created, _ := time.Parse(time.RFC3339Nano, s.GetCreationTimestamp())
	out := Snapshot{Name: s.GetName(), Status: s.GetStatus(), Created: created,
		SourceDisk: s.GetSourceDisk(), SourceDiskID: s.GetSourceDiskId(), Description: s.GetDescription(),
		DiskSizeGB: s.GetDiskSizeGb(), StorageBytes: s.GetStorageBytes(), Type: s.GetSnapshotType(),
		SchedulePolicy: s.GetSourceSnapshotSchedulePolicy()}
	if s.Id != nil {
		out.ID = strconv.FormatUint(s.GetId(), 10)
	}
	if len(s.GetLabels()) > 0 {
		out.Labels = make(map[string]string, len(s.GetLabels()))
		for k, v := range s.GetLabels() {
			out.Labels[k] = v
		}
	}
	return out
}

// SnapshotPath is a snapshot's path, projects/P/global/snapshots/N, the
// key SnapshotUsers names it by; from a URL or a path.
func SnapshotPath(s string) string {
	if i := strings.Index(s, "projects/"); i >= 0 {
		return s[i:]
	}
	return s
}

// SnapshotUsers says what in a project was made from a snapshot, by the
// snapshot's path (SnapshotPath: a disk of this project may be made from
// another project's snapshot): its disks (disks.aggregatedList) and its
// images (images.list) whose sourceSnapshot names one, as "disk
// projects/P/zones/Z/disks/D" and "image NAME". A listing that failed or
// left a scope unknown fails the whole answer: a use that could not be
// read is unknown, not none.
func (c *Client) SnapshotUsers(ctx context.Context, project string) (map[string][]string, error) {
	out := map[string][]string{}
	disks, err := c.ListDisks(ctx, project)
	switch {
	case err != nil:
		return nil, err
	case !disks.Complete:
		return nil, errors.New(disks.Problem)
	case len(disks.UnknownScopes) > 0:
		return nil, fmt.Errorf("disks.aggregatedList %s: %d scopes unknown: %v", project, len(disks.UnknownScopes), disks.UnknownScopes)
	}
	for _, d := range disks.Disks {
		if d.SourceSnapshot != "" {
			out[SnapshotPath(d.SourceSnapshot)] = append(out[SnapshotPath(d.SourceSnapshot)], "disk "+d.Key.String())
		}
	}
	it := c.images.List(ctx, &computepb.ListImagesRequest{Project: project, MaxResults: proto.Uint32(uint32(c.pageSize))}, c.readRetry...)
	token := ""
	for page := 1; ; page++ {
		items, next, err := it.InternalFetch(c.pageSize, token)
		if err != nil {
			return nil, fmt.Errorf("images.list %s: page %d failed: %w%s", project, page, err, reasonSuffix(err))
		}
		for _, im := range items {
			if src := im.GetSourceSnapshot(); src != "" {
				out[SnapshotPath(src)] = append(out[SnapshotPath(src)], "image "+im.GetName())
			}
		}
		if next == "" || next == token {
			if next != "" {
				return nil, fmt.Errorf("images.list %s: page %d returned its own page token again", project, page)
			}
			return out, nil
		}
		token = next
	}
}

// DeleteSnapshot deletes one snapshot (snapshots.delete) and waits for its
// global operation. Its error says the outcome (outcome.Of): gone (404),
// changed, refused (another 4xx, or an operation that failed), unknown.
func (c *Client) DeleteSnapshot(ctx context.Context, project, name string) error {
	if project == "" || name == "" {
		return fmt.Errorf("snapshots.delete: empty project or name (%q, %q)", project, name)
	}
	const method = "snapshots.delete"
	what := project + "/" + name
	op, err := c.snapshots.Delete(ctx, &computepb.DeleteSnapshotRequest{Project: project, Snapshot: name}, c.deleteRetry...)
	if err != nil {
		return deleteRefused(method, what, err)
	}
	return c.deleted(ctx, method, what, op, func() bool {
		_, gerr := c.GetSnapshot(ctx, project, name)
		return errors.Is(gerr, outcome.ErrNotFound)
	})
}
