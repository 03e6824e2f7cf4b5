package ebs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
)

// The documented example account ids only.
const (
	acct  = "123456789012"
	acct2 = "111122223333"
	key   = "AKIDEXAMPLE"
	key2  = "AKIDEXAMPLE2"
)

var ctx = context.Background()

// A new connection per request: no idle connection for Go's transport to
// drop under a response (aws/aws-sdk-go-v2#2737).
var noKeepAlive = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })

// transportRetry is the one repeat the SDK may make of a call whose
// connection the transport closed.
const transportRetry = 1

func newFake(t testing.TB) *ebsfake.Server {
	t.Helper()
	s := ebsfake.New(ebsfake.Options{Account: acct, Accounts: map[string]string{key2: acct2}, Logf: t.Logf})
	s.Start()
	t.Cleanup(func() {
		if n := s.Calls(ebsfake.OpUnknown); n > 0 {
			t.Errorf("the client made %d requests the fake has no route for", n)
		}
	})
	t.Cleanup(s.Close)
	return s
}

func options(endpoint string, mod ...func(*ebs.Options)) ebs.Options {
	o := ebs.Options{
		Service: awsclient.Service{
			Account:           acct,
			Region:            "us-east-1",
			Endpoint:          endpoint,
			Credentials:       credentials.NewStaticCredentialsProvider(key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
			RequestsPerSecond: 1000,
			Burst:             1000,
			MaxAttempts:       3,
			MaxBackoff:        5 * time.Millisecond,
			HTTPClient:        noKeepAlive,
		},
		QuotasEndpoint:   endpoint,
		DeletesPerSecond: 1000,
		DeleteBurst:      1000,
	}
	for _, m := range mod {
		m(&o)
	}
	return o
}

func newClient(t testing.TB, endpoint string, mod ...func(*ebs.Options)) *ebs.Client {
	t.Helper()
	c, err := ebs.New(ctx, options(endpoint, mod...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var created = time.Date(2025, 7, 8, 9, 10, 11, 0, time.UTC)

// 1,203 volumes in pages of 500 are three DescribeVolumes calls, and every
// field reclaim reads comes through the real SDK's parser.
func TestListPagesAndParsesEveryField(t *testing.T) {
	f := newFake(t)
	for range 1202 {
		f.AddVolume("", ebsfake.Volume{})
	}
	id := f.AddVolume("", ebsfake.Volume{ID: "vol-0fffffffffffffff0", AZ: "us-east-1b", Type: "io2", SizeGiB: 200,
		Created: created, SnapshotID: "snap-0123456789abcdef0", MultiAttach: true, Iops: 3000,
		Tags:      map[string]string{"kubernetes.io/created-for/pv/name": "pvc-1", "ebs.csi.aws.com/cluster": "true"},
		Instances: []string{"i-0123456789abcdef0", "i-0123456789abcdef1"}})
	c := newClient(t, f.URL(), func(o *ebs.Options) { o.PageSize = 500 })

	l := c.List(ctx)
	if !l.Complete || l.Problem != "" || l.Account != acct || l.Region != "us-east-1" {
		t.Fatalf("listing %+v", l.Problem)
	}
	if len(l.Volumes) != 1203 {
		t.Fatalf("%d volumes, want 1203", len(l.Volumes))
	}
	if n := f.Calls(ebsfake.OpDescribeVolumes); n < 3 || n > 3+transportRetry {
		t.Errorf("%d DescribeVolumes calls, want 3", n)
	}
	got := l.Volumes[len(l.Volumes)-1]
	want := ebs.Volume{ID: id, AZ: "us-east-1b", State: "in-use", Type: "io2", SizeGiB: 200, Created: created,
		Tags:        map[string]string{"kubernetes.io/created-for/pv/name": "pvc-1", "ebs.csi.aws.com/cluster": "true"},
		Attachments: []string{"i-0123456789abcdef0", "i-0123456789abcdef1"}, SnapshotID: "snap-0123456789abcdef0", MultiAttach: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("volume\n got %+v\nwant %+v", got, want)
	}
	if v := l.Volumes[0]; v.State != "available" || v.Type != "gp3" || v.SizeGiB != 8 || v.Tags != nil || v.Attachments != nil {
		t.Errorf("a plain volume: %+v", v)
	}
	if n := c.Calls()[ebs.OpDescribeVolumes]; n < 3 {
		t.Errorf("client counted %d DescribeVolumes attempts", n)
	}
}

// A page EC2 refuses makes the listing incomplete; the problem names the
// permission, and the volumes of the pages before are kept.
func TestFailedPageMakesListingIncomplete(t *testing.T) {
	f := newFake(t)
	for range 12 {
		f.AddVolume("", ebsfake.Volume{})
	}
	f.FailPage(ebsfake.OpDescribeVolumes, 2, ebsfake.CodeUnauthorizedOperation, 0)
	l := newClient(t, f.URL(), func(o *ebs.Options) { o.PageSize = 5 }).List(ctx)
	if l.Complete || len(l.Volumes) != 5 {
		t.Fatalf("complete %v with %d volumes, want incomplete with 5", l.Complete, len(l.Volumes))
	}
	for _, want := range []string{"page 2", "UnauthorizedOperation", "grant ec2:DescribeVolumes", acct, "5 volumes seen"} {
		if !strings.Contains(l.Problem, want) {
			t.Errorf("problem %q does not say %q", l.Problem, want)
		}
	}
}

func TestPageSizeIsChecked(t *testing.T) {
	for _, n := range []int32{4, 501} {
		if _, err := ebs.New(ctx, options("http://127.0.0.1:1", func(o *ebs.Options) { o.PageSize = n })); err == nil || !strings.Contains(err.Error(), "5..500") {
			t.Errorf("pageSize %d: %v", n, err)
		}
	}
}

func TestVolumeReRead(t *testing.T) {
	f := newFake(t)
	id := f.AddVolume("", ebsfake.Volume{SizeGiB: 100, Created: created})
	c := newClient(t, f.URL())
	v, err := c.Volume(ctx, id)
	if err != nil || v.ID != id || v.SizeGiB != 100 || v.State != "available" {
		t.Fatalf("Volume = %+v, %v", v, err)
	}
	_, err = c.Volume(ctx, "vol-0000000000000dead")
	if !errors.Is(err, outcome.ErrNotFound) || !strings.Contains(err.Error(), "InvalidVolume.NotFound") {
		t.Errorf("missing volume: %v, want ErrNotFound carrying EC2's code", err)
	}
}

// Each of EC2's answers to DeleteVolume says one outcome.
func TestDeleteVolumeOutcomes(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())

	free := f.AddVolume("", ebsfake.Volume{})
	if err := c.DeleteVolume(ctx, free); err != nil || f.Has(free) {
		t.Fatalf("delete: %v (still there %v)", err, f.Has(free))
	}
	if o := outcome.Of(c.DeleteVolume(ctx, free)); o != outcome.Gone {
		t.Errorf("second delete: outcome %v, want gone", o)
	}
	attached := f.AddVolume("", ebsfake.Volume{Instances: []string{"i-0123456789abcdef0"}})
	err := c.DeleteVolume(ctx, attached)
	if outcome.Of(err) != outcome.Changed || !strings.Contains(err.Error(), "VolumeInUse") || !f.Has(attached) {
		t.Errorf("attached: %v (outcome %v, still there %v)", err, outcome.Of(err), f.Has(attached))
	}
	creating := f.AddVolume("", ebsfake.Volume{State: "creating"})
	if o := outcome.Of(c.DeleteVolume(ctx, creating)); o != outcome.Changed {
		t.Errorf("creating: outcome %v, want changed (IncorrectState)", o)
	}

	victim := f.AddVolume("", ebsfake.Volume{})
	for _, tc := range []struct {
		code string
		want outcome.Outcome
		hint string
	}{
		{ebsfake.CodeVolumeInUse, outcome.Changed, ""},
		{ebsfake.CodeIncorrectState, outcome.Changed, ""},
		{ebsfake.CodeVolumeNotFound, outcome.Gone, ""},
		{ebsfake.CodeUnauthorizedOperation, outcome.Refused, "grant ec2:DeleteVolume"},
		{ebsfake.CodeInvalidParameterValue, outcome.Refused, ""},
		{ebsfake.CodeInternalError, outcome.Unknown, "failed after 3 attempts"},
	} {
		f.FailNext(ebsfake.OpDeleteVolume, tc.code, 0) // every attempt, retries too
		err := c.DeleteVolume(ctx, victim)
		if got := outcome.Of(err); got != tc.want || !strings.Contains(err.Error(), tc.code) || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("%s: outcome %v, want %v; error %v", tc.code, got, tc.want, err)
		}
		f.ClearFaults()
	}
	if !f.Has(victim) {
		t.Error("a faulted delete deleted the volume")
	}
}

// A delete whose answer is lost is retried by the SDK and meets NotFound:
// the volume is gone, not failed.
func TestDeleteWithLostResponseIsGone(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	id := f.AddVolume("", ebsfake.Volume{})
	f.LoseDeleteResponses(1)
	err := c.DeleteVolume(ctx, id)
	if outcome.Of(err) != outcome.Gone || !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("lost response: %v, want gone after the retry", err)
	}
	if n := f.Calls(ebsfake.OpDeleteVolume); f.Has(id) || n < 2 || n > 2+transportRetry {
		t.Errorf("still there %v, %d calls", f.Has(id), n)
	}
	if n := f.MutatingCalls(); n != f.Calls(ebsfake.OpDeleteVolume) {
		t.Errorf("%d mutating calls", n)
	}
}

func TestCreateSnapshotTagsIt(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	id := f.AddVolume("", ebsfake.Volume{SizeGiB: 50})
	tags := map[string]string{"reclaim.dev/volume": id, "reclaim.dev/reason": "unused"}
	snap, err := c.CreateSnapshot(ctx, id, "reclaim: before deleting "+id, tags)
	if err != nil || !strings.HasPrefix(snap, "snap-") {
		t.Fatalf("CreateSnapshot = %q, %v", snap, err)
	}
	got := f.Snapshots()
	if len(got) != 1 || got[0].ID != snap || got[0].VolumeID != id || got[0].State != "pending" ||
		got[0].Account != acct || got[0].Description != "reclaim: before deleting "+id || !reflect.DeepEqual(got[0].Tags, tags) {
		t.Errorf("snapshots %+v", got)
	}
	if _, err := c.CreateSnapshot(ctx, "vol-0000000000000dead", "", nil); !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("snapshot of a missing volume: %v", err)
	}
	f.FailNext(ebsfake.OpCreateSnapshot, ebsfake.CodeUnauthorizedOperation, 1)
	if _, err := c.CreateSnapshot(ctx, id, "", tags); err == nil || !strings.Contains(err.Error(), "grant ec2:CreateSnapshot") || !strings.Contains(err.Error(), "ec2:CreateTags") {
		t.Errorf("denied: %v", err)
	}
}

// A volume's snapshots reclaim made are found by their tag, with their
// state as EC2 moves them from pending to completed.
func TestSnapshotsOf(t *testing.T) {
	f := ebsfake.New(ebsfake.Options{Account: acct, SnapshotPolls: 1, Logf: t.Logf})
	f.Start()
	t.Cleanup(f.Close)
	c := newClient(t, f.URL())
	id := f.AddVolume("", ebsfake.Volume{SizeGiB: 50})
	other := f.AddVolume("", ebsfake.Volume{SizeGiB: 50})
	snap, err := c.CreateSnapshot(ctx, id, "", map[string]string{"reclaim.dev/snapshot-of": id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSnapshot(ctx, id, "by hand", nil); err != nil { // not reclaim's: no tag
		t.Fatal(err)
	}
	if _, err := c.CreateSnapshot(ctx, other, "", map[string]string{"reclaim.dev/snapshot-of": other}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pending", "completed"} {
		got, err := c.SnapshotsOf(ctx, id, "reclaim.dev/snapshot-of")
		if err != nil || len(got) != 1 || got[0].ID != snap || got[0].VolumeID != id || got[0].State != want || got[0].Started.IsZero() {
			t.Fatalf("SnapshotsOf = %+v, %v; want %s %s", got, err, snap, want)
		}
	}
	f.FailNext(ebsfake.OpDescribeSnapshots, ebsfake.CodeUnauthorizedOperation, 1)
	if _, err := c.SnapshotsOf(ctx, id, "reclaim.dev/snapshot-of"); err == nil || !strings.Contains(err.Error(), "grant ec2:DescribeSnapshots") {
		t.Fatalf("denied: %v", err)
	}
}

// Only the storage quotas are kept, from every page, in GiB.
func TestQuotas(t *testing.T) {
	f := newFake(t)
	// More than one page (100) of other EBS quotas around the storage ones.
	for i := range 120 {
		f.SetQuota("", fmt.Sprintf("L-%08X", i), fmt.Sprintf("Concurrent snapshots per thing %d", i), 5, "None")
	}
	f.SetQuota("", "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 50, "None")
	f.SetQuota("", "L-D18FCD1D", "Storage for General Purpose SSD (gp2) volumes, in TiB", 50, "None")
	f.SetQuota("", "L-FD252861", "Storage for Provisioned IOPS SSD (io1) volumes, in TiB", 300, "None")
	f.SetQuota("", "L-09BD8365", "Storage for Provisioned IOPS SSD (io2) volumes, in TiB", 20, "None")
	f.SetQuota("", "L-82ACEF56", "Storage for Throughput Optimized HDD (st1) volumes in TiB", 300, "None") // no comma, as some listings show it
	f.SetQuota("", "L-B9F7C487", "Storage modifications for Magnetic (standard) volumes, in TiB", 500, "None")
	f.SetQuota("", "L-17AF77E8", "Storage for Cold HDD (sc1) volumes, in TiB", 300, "None")
	f.SetQuota("", "L-9CF3C2EB", "Storage for Magnetic (standard) volumes, in TiB", 300, "None")
	f.SetQuota("", "L-B3A130E6", "IOPS for Provisioned IOPS SSD (io2) volumes", 100000, "None")
	c := newClient(t, f.URL())

	qs, err := c.Quotas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string]ebs.Quota{}
	for _, q := range qs {
		byType[q.VolumeType] = q
	}
	if len(qs) != 7 || len(byType) != 7 {
		t.Fatalf("%d quotas %v, want the 7 storage ones", len(qs), byType)
	}
	want := ebs.Quota{Account: acct, Region: "us-east-1", Code: "L-7A658B76", Name: "Storage for General Purpose SSD (gp3) volumes, in TiB", VolumeType: "gp3", LimitGiB: 50 * 1024}
	if byType["gp3"] != want {
		t.Errorf("gp3 %+v", byType["gp3"])
	}
	if byType["standard"].LimitGiB != 300*1024 || byType["io2"].LimitGiB != 20*1024 || byType["st1"].LimitGiB != 300*1024 {
		t.Errorf("quotas %+v", byType)
	}
	if n := f.Calls(ebsfake.OpListServiceQuotas); n < 2 {
		t.Errorf("%d ListServiceQuotas calls, want 2 pages", n)
	}

	f.FailNext(ebsfake.OpListServiceQuotas, ebsfake.CodeAccessDenied, 1)
	if _, err := c.Quotas(ctx); err == nil || !strings.Contains(err.Error(), "AccessDeniedException") || !strings.Contains(err.Error(), "grant servicequotas:ListServiceQuotas") {
		t.Errorf("denied: %v", err)
	}
}

// Deletes wait on their own bucket; listing does not draw from it.
func TestDeletesArePaced(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL(), func(o *ebs.Options) { o.DeletesPerSecond, o.DeleteBurst = 10, 1 })
	describe, mutate := c.Limiters()
	if describe.Limit() != 1000 || mutate.Limit() != 10 || mutate.Burst() != 1 {
		t.Fatalf("limits %v/%d, %v/%d", describe.Limit(), describe.Burst(), mutate.Limit(), mutate.Burst())
	}
	var ids []string
	for range 4 {
		ids = append(ids, f.AddVolume("", ebsfake.Volume{}))
	}
	start := time.Now()
	for range 5 {
		c.List(ctx)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("5 listings took %s: the delete bucket slowed them?", d)
	}
	start = time.Now()
	for _, id := range ids {
		if err := c.DeleteVolume(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 280*time.Millisecond {
		t.Errorf("4 deletes at 10/s, burst 1, took %s, want >= 300ms", d)
	}
}

// A fleet routes each call to its account and region's client; one fake
// serves both accounts (by access key).
func TestFleetRoutesByAccountAndRegion(t *testing.T) {
	f := newFake(t)
	a := f.AddVolume(acct, ebsfake.Volume{})
	b := f.AddVolume(acct2, ebsfake.Volume{})
	f.AddVolume(acct2, ebsfake.Volume{})
	f.SetQuota(acct2, "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 1, "None")
	c1 := newClient(t, f.URL())
	c2 := newClient(t, f.URL(), func(o *ebs.Options) {
		o.Account = acct2
		o.Credentials = credentials.NewStaticCredentialsProvider(key2, "secret", "")
	})
	fl, err := ebs.NewFleetOf(c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	ls := fl.List(ctx)
	if len(ls) != 2 || ls[0].Account != acct || len(ls[0].Volumes) != 1 || ls[1].Account != acct2 || len(ls[1].Volumes) != 2 {
		t.Fatalf("listings %+v", ls)
	}
	if _, err := fl.Volume(ctx, acct, "us-east-1", b); !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("another account's volume: %v, want not found", err)
	}
	if err := fl.DeleteVolume(ctx, acct2, "us-east-1", b); err != nil || f.Has(b) {
		t.Errorf("delete in %s: %v", acct2, err)
	}
	if _, err := fl.CreateSnapshot(ctx, acct, "us-east-1", a, "", nil); err != nil {
		t.Errorf("snapshot: %v", err)
	}
	if err := fl.DeleteVolume(ctx, acct, "eu-west-1", a); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Errorf("unconfigured region: %v", err)
	}
	qs := fl.Quotas(ctx)
	if len(qs) != 2 || len(qs[0].Quotas) != 0 || qs[0].Problem != "" || len(qs[1].Quotas) != 1 || qs[1].Quotas[0].LimitGiB != 1024 {
		t.Errorf("quotas %+v", qs)
	}
	if _, err := ebs.NewFleetOf(c1, c1); err == nil {
		t.Error("a fleet took one account and region twice")
	}
}
