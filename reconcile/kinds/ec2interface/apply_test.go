package ec2interface_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
)

// fakeAPI is EC2 as the kind sees it: interfaces by account/region, and
// what a delete of an id answers.
type fakeAPI struct {
	mu      sync.Mutex
	ifaces  map[string][]inventory.NetInterface // "account/region" -> interfaces
	delErr  map[string]error
	readErr error
	reads   []string // "account/region:id,id"
	deleted []string
}

func (f *fakeAPI) Interfaces(_ context.Context, account, region string, ids []string) ([]inventory.NetInterface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, account+"/"+region+":"+strings.Join(ids, ","))
	if f.readErr != nil {
		return nil, f.readErr
	}
	var out []inventory.NetInterface
	for _, n := range f.ifaces[account+"/"+region] {
		for _, id := range ids {
			if n.ID == id {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func (f *fakeAPI) DeleteInterface(_ context.Context, account, region, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.delErr[id]; err != nil {
		return err
	}
	key := account + "/" + region
	for i, n := range f.ifaces[key] {
		if n.ID == id {
			f.ifaces[key] = append(f.ifaces[key][:i], f.ifaces[key][i+1:]...)
			f.deleted = append(f.deleted, id)
			return nil
		}
	}
	return fmt.Errorf("InvalidNetworkInterfaceID.NotFound: %s: %w", id, outcome.ErrNotFound)
}

// apiError is an EC2 refusal (it has an error code).
type apiError struct{ code string }

func (e apiError) Error() string     { return e.code }
func (e apiError) ErrorCode() string { return e.code }

func decisionFor(account, region, eni string) *engine.Decision {
	return &engine.Decision{Kind: ec2interface.Name, ID: ec2interface.ID(account, region, eni), Name: eni,
		Detail: &ec2interface.Detail{Account: account, Region: region, Subnet: "subnet-a"}}
}

func TestRecheck(t *testing.T) {
	same := cni("eni-same", "subnet-a", "10.0.1.40")
	again := cni("eni-again", "subnet-a", "10.0.1.41")
	again.Status, again.Instance = "in-use", "i-1"
	managed := cni("eni-managed", "subnet-a", "10.0.1.42")
	managed.RequesterManaged = true
	untagged := cni("eni-untagged", "subnet-a", "10.0.1.43")
	untagged.Tags = nil
	protected := cni("eni-protected", "subnet-a", "10.0.1.44")
	protected.Tags["reclaim.dev/protect"] = "True"
	efa := cni("eni-efa", "subnet-a", "10.0.1.45")
	efa.Type = "efa"
	other := cni("eni-other", "subnet-x", "10.9.0.1")
	api := &fakeAPI{ifaces: map[string][]inventory.NetInterface{
		acct + "/" + region: {same, again, managed, untagged, protected, efa},
		acct + "/eu-west-1": {other},
	}}
	k := &ec2interface.Kind{Policy: policy(), API: api}
	cases := []struct {
		region, eni string
		want        engine.Recheck
		reason      string
	}{
		{region, "eni-same", engine.Go, ""},
		{region, "eni-gone", engine.GoneNow, ""},
		{region, "eni-again", engine.Skip, "in-use"},
		{region, "eni-managed", engine.Skip, "managed"},
		{region, "eni-untagged", engine.Skip, "evidence"},
		// The engine checks the opt-out tag in what the re-read saw.
		{region, "eni-protected", engine.Go, ""},
		{region, "eni-efa", engine.Skip, "interface type efa"},
		{"eu-west-1", "eni-other", engine.Go, ""},
		// the same id in another region is another interface
		{"eu-west-1", "eni-same", engine.GoneNow, ""},
	}
	var batch []*engine.Decision
	for _, tc := range cases {
		batch = append(batch, decisionFor(acct, tc.region, tc.eni))
	}
	vs, err := k.Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		if vs[i].Result != tc.want || !strings.Contains(vs[i].Reason, tc.reason) {
			t.Errorf("%s/%s: %+v, want %v %q", tc.region, tc.eni, vs[i], tc.want, tc.reason)
		}
		if vs[i].Result == engine.Go && vs[i].Labels == nil {
			t.Errorf("%s/%s: lets it go without its tags: the engine could not check the opt-out", tc.region, tc.eni)
		}
	}
	if got := vs[5].Labels["reclaim.dev/protect"]; got != "True" {
		t.Errorf("the protected interface's tags as re-read: %v", vs[5].Labels)
	}
	sort.Strings(api.reads)
	if len(api.reads) != 2 || api.reads[1] != acct+"/us-east-1:eni-same,eni-gone,eni-again,eni-managed,eni-untagged,eni-protected,eni-efa" {
		t.Fatalf("one re-read per account and region: %q", api.reads)
	}

	api.readErr = errors.New("RequestLimitExceeded")
	if _, err := k.Recheck(context.Background(), batch); err == nil {
		t.Fatal("a failed re-read must fail the batch")
	}
	if _, err := (&ec2interface.Kind{}).Recheck(context.Background(), batch); err == nil {
		t.Fatal("recheck without a client")
	}
	if _, err := (&ec2interface.Kind{}).Delete(context.Background(), batch); err == nil {
		t.Fatal("delete without a client")
	}
}

func TestDelete(t *testing.T) {
	cases := []struct {
		name     string
		err      error // what EC2 answers; nil: the fake's own
		exists   bool
		check    func(error) bool
		batchErr bool
	}{
		{name: "deleted", exists: true, check: func(e error) bool { return e == nil }},
		{name: "gone is success", check: func(e error) bool { return errors.Is(e, outcome.ErrNotFound) }},
		{name: "in use again is a skip", err: fmt.Errorf("InvalidNetworkInterface.InUse: %w", outcome.ErrInUse), exists: true,
			check: func(e error) bool { return outcome.Of(e) == outcome.Changed }},
		{name: "a refusal fails this one", err: outcome.MarkRefused(apiError{"UnauthorizedOperation"}), exists: true,
			check: func(e error) bool { return outcome.Of(e) == outcome.Refused }},
		{name: "an unmapped error is an unknown outcome", err: apiError{"InternalError"}, exists: true, batchErr: true},
		{name: "no answer: outcome unknown", err: context.DeadlineExceeded, exists: true, batchErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{ifaces: map[string][]inventory.NetInterface{}, delErr: map[string]error{}}
			if tc.exists {
				api.ifaces[acct+"/"+region] = []inventory.NetInterface{cni("eni-1", "subnet-a", "10.0.1.40")}
			}
			if tc.err != nil {
				api.delErr["eni-1"] = tc.err
			}
			k := &ec2interface.Kind{Policy: policy(), API: api}
			res, err := k.Delete(context.Background(), []*engine.Decision{decisionFor(acct, region, "eni-1")})
			if tc.batchErr {
				if err == nil {
					t.Fatalf("want a batch error, got %+v", res)
				}
				return
			}
			if err != nil || len(res) != 1 || !tc.check(res[0].Err) {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}

// Through the applier: planned, re-read and deleted; or found gone; or
// attached again between the re-read and the delete (skipped).
func TestApply(t *testing.T) {
	cases := []struct {
		name   string
		exists bool
		delErr error
		result string
		left   bool
	}{
		{"deleted", true, nil, audit.Deleted, false},
		{"gone since the plan", false, nil, audit.AlreadyGone, false},
		{"attached again at delete", true, fmt.Errorf("in use: %w", outcome.ErrInUse), audit.Skipped, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := cni("eni-1", "subnet-a", "10.0.1.40")
			api := &fakeAPI{ifaces: map[string][]inventory.NetInterface{}, delErr: map[string]error{"eni-1": tc.delErr}}
			if tc.exists {
				api.ifaces[acct+"/"+region] = []inventory.NetInterface{n}
			}
			k := &ec2interface.Kind{Policy: policy(), API: api}
			st := engine.NewState()
			st.Seen(ec2interface.ID(acct, region, "eni-1"), "", t0.Add(-grace-time.Minute))
			p := enginetest.Build(planSnap(n), []engine.Kind{k}, st, t0)
			if d := enginetest.DecisionFor(t, p, "eni-1"); d.Action != engine.Delete {
				t.Fatalf("not planned: %+v", d)
			}
			a, buf, _ := enginetest.Applier(t0, 0, k)
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != tc.result || out.Failed != 0 {
				t.Fatalf("%+v", out)
			}
			if got := enginetest.AuditResults(t, buf)[ec2interface.ID(acct, region, "eni-1")]; got != tc.result {
				t.Fatalf("audit %q", got)
			}
			if left := len(api.ifaces[acct+"/"+region]) == 1; left != tc.left {
				t.Fatalf("left %v", left)
			}
		})
	}
}
