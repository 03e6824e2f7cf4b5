package gce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/protobuf/proto"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gcpclient"
)

// DefaultPageSize is the aggregatedList page size, the API's maximum.
const DefaultPageSize = 500

// Options configures New. The zero value talks to the real API with
// Application Default Credentials.
type Options struct {
	// Endpoint overrides the API endpoint, e.g. a gcefake URL. Empty: the library default.
	Endpoint string
	// WithoutAuthentication sends no credentials (for fakes).
	WithoutAuthentication bool
	// CredentialsFile is a service account key file; empty: ADC.
	CredentialsFile string
	// PageSize is aggregatedList's maxResults; default 500 (the API maximum).
	PageSize int
	// UserAgent is sent with every request, if set.
	UserAgent string
	// HTTPClient, if set, is used as is (it must add credentials itself).
	HTTPClient *http.Client

	// Retries. Reads retry on 429, 403 rateLimitExceeded/userRateLimitExceeded,
	// 500, 502, 503, 504 and transport errors;
	// deletes on 429, 503 and transport errors (a repeated delete answers 404,
	// which is success); createSnapshot on 429 and 503 only before it was
	// accepted (GCE rejects a second snapshot with the same name).
	// RetryInitial is the first backoff ceiling (default 500ms), RetryMax the
	// largest (default 30s), RetryMultiplier its growth (default 2), and
	// MaxAttempts the total tries per call including the first (default 5;
	// 1 disables retries).
	RetryInitial    time.Duration
	RetryMax        time.Duration
	RetryMultiplier float64
	MaxAttempts     int

	// ClientOptions are appended to the options given to every compute client.
	ClientOptions []option.ClientOption
}

// Client is reclaim's GCE client, backed by the compute v1 REST clients;
// gcedisk.API is its seam.
type Client struct {
	disks       *compute.DisksClient
	regionDisks *compute.RegionDisksClient
	snapshots   *compute.SnapshotsClient
	images      *compute.ImagesClient
	regions     *compute.RegionsClient
	pageSize    int

	readRetry   []gax.CallOption
	deleteRetry []gax.CallOption
	writeRetry  []gax.CallOption
}

// New builds the compute clients. It does not call the API.
func New(ctx context.Context, o Options) (*Client, error) {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.PageSize > DefaultPageSize {
		o.PageSize = DefaultPageSize
	}
	if o.RetryInitial <= 0 {
		o.RetryInitial = 500 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 30 * time.Second
	}
	if o.RetryMultiplier < 1 {
		o.RetryMultiplier = 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	copts := gcpclient.Reach{Endpoint: o.Endpoint, WithoutAuthentication: o.WithoutAuthentication,
		CredentialsFile: o.CredentialsFile, UserAgent: o.UserAgent, HTTPClient: o.HTTPClient}.ClientOptions()
	copts = append(copts, o.ClientOptions...)

	c := &Client{pageSize: o.PageSize}
	var err error
	if c.disks, err = compute.NewDisksRESTClient(ctx, copts...); err != nil {
		return nil, fmt.Errorf("gce: disks client: %w", err)
	}
	if c.regionDisks, err = compute.NewRegionDisksRESTClient(ctx, copts...); err != nil {
		c.Close()
		return nil, fmt.Errorf("gce: regionDisks client: %w", err)
	}
	if c.regions, err = compute.NewRegionsRESTClient(ctx, copts...); err != nil {
		c.Close()
		return nil, fmt.Errorf("gce: regions client: %w", err)
	}
	if c.snapshots, err = compute.NewSnapshotsRESTClient(ctx, copts...); err != nil {
		c.Close()
		return nil, fmt.Errorf("gce: snapshots client: %w", err)
	}
	if c.images, err = compute.NewImagesRESTClient(ctx, copts...); err != nil {
		c.Close()
		return nil, fmt.Errorf("gce: images client: %w", err)
	}

	bo := gax.Backoff{Initial: o.RetryInitial, Max: o.RetryMax, Multiplier: o.RetryMultiplier}
	c.readRetry = []gax.CallOption{retryOn(bo, o.MaxAttempts, true, 429, 500, 502, 503, 504)}
	c.deleteRetry = []gax.CallOption{retryOn(bo, o.MaxAttempts, true, 429, 503)}
	c.writeRetry = []gax.CallOption{retryOn(bo, o.MaxAttempts, false, 429, 503)}
	return c, nil
}

// Close releases the clients' connections.
func (c *Client) Close() error {
	var errs []error
	if c.disks != nil {
		errs = append(errs, c.disks.Close())
	}
	if c.regionDisks != nil {
		errs = append(errs, c.regionDisks.Close())
	}
	if c.regions != nil {
		errs = append(errs, c.regions.Close())
	}
	if c.snapshots != nil {
		errs = append(errs, c.snapshots.Close())
	}
	if c.images != nil {
		errs = append(errs, c.images.Close())
	}
	return errors.Join(errs...)
}

// retryer retries the listed HTTP codes (and, if transport, connection
// errors) with jittered exponential backoff, at most attempts tries in all.
type retryer struct {
	bo        gax.Backoff
	codes     map[int]bool
	transport bool
	left      int
}

func retryOn(bo gax.Backoff, attempts int, transport bool, codes ...int) gax.CallOption {
	return gax.WithRetry(func() gax.Retryer {
		r := &retryer{bo: bo, codes: map[int]bool{}, transport: transport, left: attempts - 1}
		for _, c := range codes {
			r.codes[c] = true
		}
		return r
	})
}

func (r *retryer) Retry(err error) (time.Duration, bool) {
	if r.left <= 0 || !r.retryable(err) {
		return 0, false
	}
	r.left--
	return r.bo.Pause(), true
}

func (r *retryer) retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		if gerr.Code == http.StatusForbidden && r.codes[http.StatusTooManyRequests] {
			// 403 is permanent unless it is a rate limit (not quotaExceeded).
			for _, rs := range reasons(err) {
				if rs == "rateLimitExceeded" || rs == "userRateLimitExceeded" {
					return true
				}
			}
		}
		return r.codes[gerr.Code]
	}
	var uerr *url.Error
	return r.transport && errors.As(err, &uerr)
}

// httpCode is the HTTP status of an API error, or 0.
func httpCode(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

func isNotFound(err error) bool { return httpCode(err) == http.StatusNotFound }

// reasonSuffix names the API error reasons (notFound, resourceInUseByAnotherResource,
// rateLimitExceeded, ...) when err's text does not already: gax's APIError drops them.
func reasonSuffix(err error) string {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return ""
	}
	text := err.Error()
	var reasons []string
	for _, e := range gerr.Errors {
		if e.Reason != "" && !strings.Contains(text, e.Reason) {
			reasons = append(reasons, e.Reason)
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	return ", " + strings.Join(reasons, ", ")
}

func reasons(err error) []string {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return nil
	}
	var out []string
	for _, e := range gerr.Errors {
		out = append(out, e.Reason)
	}
	return out
}

// wrap names the method and resource and the API's reasons; a 404 also wraps outcome.ErrNotFound.
func wrap(method, what string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%s %s: %w: %w%s", method, what, outcome.ErrNotFound, err, reasonSuffix(err))
	}
	return fmt.Errorf("%s %s: %w%s", method, what, err, reasonSuffix(err))
}

// ---- ListDisks ----

// ListDisks lists every zonal and regional disk of a project with
// aggregatedList. A failed page makes the listing incomplete, not an error;
// the error is only for a listing that could not start.
func (c *Client) ListDisks(ctx context.Context, project string) (Listing, error) {
	l := Listing{Project: project, Complete: true, UnknownScopes: map[string]string{}}
	if project == "" {
		return l, errors.New("disks.aggregatedList: empty project")
	}
	it := c.disks.AggregatedList(ctx, &computepb.AggregatedListDisksRequest{
		Project:              project,
		MaxResults:           proto.Uint32(uint32(c.pageSize)),
		ReturnPartialSuccess: proto.Bool(true),
	}, c.readRetry...)
	var problems []string
	// InternalFetch is one API page: exactly maxResults=PageSize, one request
	// (plus retries), and it.Response is that page's raw body. The public
	// Next/Pager interfaces count scope pairs, not pages, and would shrink
	// maxResults to fill their buffers.
	token := ""
	for page := 1; ; page++ {
		pairs, next, err := it.InternalFetch(c.pageSize, token)
		if err != nil {
			l.Complete = false
			problems = append(problems, fmt.Sprintf("disks.aggregatedList %s: page %d failed (retries exhausted or not retryable); %d disks seen before it: %v%s",
				project, page, len(l.Disks), err, reasonSuffix(err)))
			break
		}
		if resp, ok := it.Response.(*computepb.DiskAggregatedList); ok && resp != nil {
			for _, u := range resp.GetUnreachables() {
				l.UnknownScopes[scopeOf(u)] = "UNREACHABLE: listed in unreachables"
			}
			if w := resp.GetWarning(); w != nil && w.GetCode() != "NO_RESULTS_ON_PAGE" {
				if sc := warningScope(w); sc != "" {
					l.UnknownScopes[sc] = warningText(w)
				} else {
					l.Complete = false
					problems = append(problems, fmt.Sprintf("disks.aggregatedList %s: page %d warning %s", project, page, warningText(w)))
				}
			}
		}
		for _, p := range pairs {
			if w := p.Value.GetWarning(); w != nil && w.GetCode() != "NO_RESULTS_ON_PAGE" {
				l.UnknownScopes[p.Key] = warningText(w)
			}
			for _, d := range p.Value.GetDisks() {
				disk, err := convertDisk(project, p.Key, d)
				if err != nil {
					// A disk we cannot read is not a disk we may act on; and
					// the listing no longer proves anything about it.
					l.Complete = false
					problems = append(problems, err.Error())
					continue
				}
				l.Disks = append(l.Disks, disk)
			}
		}
		if next == "" {
			break
		}
		if next == token {
			l.Complete = false
			problems = append(problems, fmt.Sprintf("disks.aggregatedList %s: page %d returned its own page token again", project, page))
			break
		}
		token = next
	}
	if len(l.UnknownScopes) == 0 {
		l.UnknownScopes = nil
	}
	l.Problem = strings.Join(problems, "; ")
	return l, nil
}

func warningText(w *computepb.Warning) string {
	if w.GetMessage() == "" {
		return w.GetCode()
	}
	return w.GetCode() + ": " + w.GetMessage()
}

func warningScope(w *computepb.Warning) string {
	for _, d := range w.GetData() {
		if d.GetKey() == "scope" && d.GetValue() != "" {
			return scopeOf(d.GetValue())
		}
	}
	return ""
}

// scopeOf reduces a scope or a URL containing one to "zones/Z" or "regions/R".
func scopeOf(s string) string {
	p := strings.Split(strings.Trim(s, "/"), "/")
	for i := len(p) - 2; i >= 0; i-- {
		if (p[i] == "zones" || p[i] == "regions") && p[i+1] != "" {
			return p[i] + "/" + p[i+1]
		}
	}
	return s
}

// convertDisk turns an API disk into an Disk. scope is the
// aggregatedList key ("zones/Z", "regions/R"), or "" for a get.
func convertDisk(project, scope string, d *computepb.Disk) (Disk, error) {
	var key inventory.DiskKey
	var err error
	if sl := d.GetSelfLink(); sl != "" {
		key, err = inventory.ParseDiskKey(sl)
		if err != nil {
			return Disk{}, fmt.Errorf("disk %q in %s: %w", d.GetName(), scope, err)
		}
	} else {
		key = inventory.DiskKey{Project: project, Name: d.GetName()}
		switch {
		case d.GetRegion() != "":
			key.Region = inventory.LastSegment(d.GetRegion())
		case d.GetZone() != "":
			key.Zone = inventory.LastSegment(d.GetZone())
		case strings.HasPrefix(scope, "regions/"):
			key.Region = strings.TrimPrefix(scope, "regions/")
		case strings.HasPrefix(scope, "zones/"):
			key.Zone = strings.TrimPrefix(scope, "zones/")
		}
		if key.Name == "" || key.Location() == "" {
			return Disk{}, fmt.Errorf("disk %q in %s: no selfLink, name or location", d.GetName(), scope)
		}
	}
	out := Disk{
		Key:              key,
		SizeGB:           d.GetSizeGb(),
		Type:             inventory.LastSegment(d.GetType()),
		Status:           d.GetStatus(),
		LabelFingerprint: d.GetLabelFingerprint(),
		Description:      d.GetDescription(),
		SourceSnapshot:   d.GetSourceSnapshot(),
	}
	if d.Id != nil {
		out.ID = strconv.FormatUint(d.GetId(), 10)
	}
	if len(d.GetUsers()) > 0 {
		out.Users = append([]string(nil), d.GetUsers()...)
	}
	if len(d.GetLabels()) > 0 {
		out.Labels = make(map[string]string, len(d.GetLabels()))
		for k, v := range d.GetLabels() {
			out.Labels[k] = v
		}
	}
	for _, z := range d.GetReplicaZones() {
		out.ReplicaZones = append(out.ReplicaZones, inventory.LastSegment(z))
	}
	for _, ts := range []struct {
		field string
		in    string
		out   *time.Time
	}{
		{"creationTimestamp", d.GetCreationTimestamp(), &out.Created},
		{"lastAttachTimestamp", d.GetLastAttachTimestamp(), &out.LastAttach},
		{"lastDetachTimestamp", d.GetLastDetachTimestamp(), &out.LastDetach},
	} {
		if ts.in == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ts.in)
		if err != nil {
			return Disk{}, fmt.Errorf("disk %s: bad %s %q: %w", key, ts.field, ts.in, err)
		}
		*ts.out = t
	}
	if out.Created.IsZero() {
		// An unknown age must not read as "very old".
		return Disk{}, fmt.Errorf("disk %s: no creationTimestamp", key)
	}
	return out, nil
}

// ---- RegionQuotas ----

// RegionQuotas reads the named metrics of one region. A metric the API did
// not return comes back with Known=false.
func (c *Client) RegionQuotas(ctx context.Context, project, region string, metrics []string) ([]Quota, error) {
	r, err := c.regions.Get(ctx, &computepb.GetRegionRequest{Project: project, Region: region}, c.readRetry...)
	if err != nil {
		return nil, wrap("regions.get", "projects/"+project+"/regions/"+region, err)
	}
	byMetric := map[string]*computepb.Quota{}
	for _, q := range r.GetQuotas() {
		byMetric[q.GetMetric()] = q
	}
	out := make([]Quota, 0, len(metrics))
	for _, m := range metrics {
		q := Quota{Project: project, Region: region, Metric: m}
		if got, ok := byMetric[m]; ok {
			q.Limit, q.Usage, q.Known = got.GetLimit(), got.GetUsage(), true
		} else {
			q.Problem = fmt.Sprintf("regions.get returned no %s quota", m)
		}
		out = append(out, q)
	}
	return out, nil
}

// ---- GetDisk ----

func checkKey(key inventory.DiskKey) error {
	if key.Project == "" || key.Name == "" || (key.Zone == "") == (key.Region == "") ||
		key.Project == inventory.Unspecified || key.Zone == inventory.Unspecified {
		return fmt.Errorf("gce: disk key %+v: need a project, a name and exactly one of zone and region", key)
	}
	return nil
}

// GetDisk re-reads one disk; outcome.ErrNotFound if it is gone.
func (c *Client) GetDisk(ctx context.Context, key inventory.DiskKey) (Disk, error) {
	if err := checkKey(key); err != nil {
		return Disk{}, err
	}
	var d *computepb.Disk
	var err error
	method := "disks.get"
	if key.Region != "" {
		method = "regionDisks.get"
		d, err = c.regionDisks.Get(ctx, &computepb.GetRegionDiskRequest{Project: key.Project, Region: key.Region, Disk: key.Name}, c.readRetry...)
	} else {
		d, err = c.disks.Get(ctx, &computepb.GetDiskRequest{Project: key.Project, Zone: key.Zone, Disk: key.Name}, c.readRetry...)
	}
	if err != nil {
		return Disk{}, wrap(method, key.String(), err)
	}
	scope := "zones/" + key.Zone
	if key.Region != "" {
		scope = "regions/" + key.Region
	}
	out, err := convertDisk(key.Project, scope, d)
	if err != nil {
		return Disk{}, fmt.Errorf("%s %s: %w", method, key, err)
	}
	return out, nil
}

// ---- DeleteDisk, snapshots ----

// DeleteDisk deletes the disk and waits for the operation to finish;
// outcome.ErrNotFound if it was already gone.
func (c *Client) DeleteDisk(ctx context.Context, key inventory.DiskKey) error {
	if err := checkKey(key); err != nil {
		return err
	}
	var op *compute.Operation
	var err error
	method := "disks.delete"
	if key.Region != "" {
		method = "regionDisks.delete"
		op, err = c.regionDisks.Delete(ctx, &computepb.DeleteRegionDiskRequest{Project: key.Project, Region: key.Region, Disk: key.Name}, c.deleteRetry...)
	} else {
		op, err = c.disks.Delete(ctx, &computepb.DeleteDiskRequest{Project: key.Project, Zone: key.Zone, Disk: key.Name}, c.deleteRetry...)
	}
	if err != nil {
		return deleteRefused(method, key.String(), err)
	}
	return c.deleted(ctx, method, key.String(), op, func() bool {
		_, gerr := c.GetDisk(ctx, key)
		return errors.Is(gerr, outcome.ErrNotFound)
	})
}

// deleteRefused says the outcome of a delete call GCE answered with an
// error: gone (404), changed (resourceInUseByAnotherResource), refused
// (another 4xx: not done), else unknown (no answer, a 5xx).
func deleteRefused(method, what string, err error) error {
	err = wrap(method, what, err)
	switch code := httpCode(err); {
	case code == http.StatusNotFound:
		return err
	case slices.Contains(reasons(err), "resourceInUseByAnotherResource"):
		return outcome.MarkChanged(err) // in use again since the re-read
	case code >= 400 && code < 500:
		return outcome.MarkRefused(err) // GCE's answer: not done
	}
	return err
}

// deleted waits on a delete's operation and says its outcome; gone
// re-reads the resource when the operation reports it missing.
func (c *Client) deleted(ctx context.Context, method, what string, op *compute.Operation, gone func() bool) error {
	err := c.wait(ctx, op)
	if err == nil {
		return nil
	}
	if (isNotFound(err) || opNotFound(op)) && gone() {
		// Either the operation is unknown to the poll, or it reports the
		// resource missing. Only its absence proves the delete.
		return fmt.Errorf("%s %s: %w (operation %s: %v)", method, what, outcome.ErrNotFound, op.Name(), err)
	}
	err = fmt.Errorf("%s %s: operation %s: %w%s", method, what, op.Name(), err, reasonSuffix(err))
	if p := op.Proto(); p.GetStatus() == computepb.Operation_DONE && len(p.GetError().GetErrors()) > 0 {
		// The operation ended and failed: the resource is still there.
		for _, e := range p.GetError().GetErrors() {
			if e.GetCode() == "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE" {
				return outcome.MarkChanged(err)
			}
		}
		return outcome.MarkRefused(err)
	}
	return err // the wait gave up: the operation may still delete it
}

// StartSnapshot starts a snapshot of the disk (createSnapshot) and does not
// wait for it. A
// snapshot of that name that exists already (409 alreadyExists: a start
// retried, or an earlier run's) is no error; GetSnapshot says where it is.
func (c *Client) StartSnapshot(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) error {
	_, _, err := c.createSnapshot(ctx, key, name, labels)
	if httpCode(err) == http.StatusConflict {
		return nil
	}
	return err
}

// GetSnapshot reads one snapshot (snapshots.get); outcome.ErrNotFound if
// there is none.
func (c *Client) GetSnapshot(ctx context.Context, project, name string) (Snapshot, error) {
	if project == "" || name == "" {
		return Snapshot{}, fmt.Errorf("snapshots.get: empty project or name (%q, %q)", project, name)
	}
	s, err := c.snapshots.Get(ctx, &computepb.GetSnapshotRequest{Project: project, Snapshot: name}, c.readRetry...)
	if err != nil {
		return Snapshot{}, wrap("snapshots.get", project+"/"+name, err)
	}
	return convertSnapshot(s), nil
}

// createSnapshot sends disks.createSnapshot (or regionDisks') and returns
// its operation and method.
func (c *Client) createSnapshot(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) (*compute.Operation, string, error) {
	if err := checkKey(key); err != nil {
		return nil, "", err
	}
	if name == "" {
		return nil, "", fmt.Errorf("createSnapshot %s: empty snapshot name", key)
	}
	snap := &computepb.Snapshot{Name: proto.String(name), Labels: labels}
	var op *compute.Operation
	var err error
	method := "disks.createSnapshot"
	if key.Region != "" {
		method = "regionDisks.createSnapshot"
		op, err = c.regionDisks.CreateSnapshot(ctx, &computepb.CreateSnapshotRegionDiskRequest{
			Project: key.Project, Region: key.Region, Disk: key.Name, SnapshotResource: snap}, c.writeRetry...)
	} else {
		op, err = c.disks.CreateSnapshot(ctx, &computepb.CreateSnapshotDiskRequest{
			Project: key.Project, Zone: key.Zone, Disk: key.Name, SnapshotResource: snap}, c.writeRetry...)
	}
	if err != nil {
		return nil, method, wrap(method, key.String()+" snapshot "+name, err)
	}
	return op, method, nil
}

// wait polls the operation until DONE; a DONE operation carrying errors is an error.
func (c *Client) wait(ctx context.Context, op *compute.Operation) error {
	if !op.Done() {
		if err := op.Wait(ctx, c.readRetry...); err != nil {
			if p := op.Proto(); p != nil && p.GetStatus() == computepb.Operation_DONE && p.GetError() != nil {
				return fmt.Errorf("%s (%w)", opErrorText(p), err)
			}
			return err
		}
	}
	if p := op.Proto(); p.GetError() != nil && len(p.GetError().GetErrors()) > 0 {
		return errors.New(opErrorText(p))
	}
	return nil
}

func opErrorText(p *computepb.Operation) string {
	var parts []string
	for _, e := range p.GetError().GetErrors() {
		parts = append(parts, e.GetCode()+": "+e.GetMessage())
	}
	s := "failed: " + strings.Join(parts, "; ")
	if p.HttpErrorStatusCode != nil {
		s += fmt.Sprintf(" (HTTP %d %s)", p.GetHttpErrorStatusCode(), p.GetHttpErrorMessage())
	}
	return s
}

// opNotFound reports whether a DONE operation failed because its target was missing.
func opNotFound(op *compute.Operation) bool {
	p := op.Proto()
	if p == nil {
		return false
	}
	if p.GetHttpErrorStatusCode() == http.StatusNotFound {
		return true
	}
	for _, e := range p.GetError().GetErrors() {
		if e.GetCode() == "RESOURCE_NOT_FOUND" {
			return true
		}
	}
	return false
}
