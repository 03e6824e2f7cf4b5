package ebs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory/contracttest"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
)

// The ebs provider keeps the delete contract the applier relies on.
func TestDeleteContract(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	var n atomic.Int32
	contracttest.Run(t, contracttest.Deleter{
		Get: func(ctx context.Context, id string) error {
			_, err := c.Volume(ctx, id)
			return err
		},
		Delete: c.DeleteVolume,
		Existing: func(t *testing.T) string {
			return f.AddVolume("", ebsfake.Volume{ID: fmt.Sprintf("vol-%017d", n.Add(1))})
		},
		Missing: "vol-0000000000000dead",
	})
}

// Published bodies, served as EC2 would, through the SDK and the outcome
// mapping: the API reference's DeleteVolume sample response is a delete
// done, and its example error response (a 4xx with a code) is a refusal
// that keeps EC2's code and message.
func TestPublishedBodies(t *testing.T) {
	const (
		// Amazon EC2 API Reference, DeleteVolume, "Sample Response".
		deleteSample = `<DeleteVolumeResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId>
  <return>true</return>
</DeleteVolumeResponse>`
		// Amazon EC2 API Reference, "Error codes for the Amazon EC2 API",
		// "Example error response" (the wire-samples reference copy).
		errorSample = `<Response>
    <Errors>
         <Error>
           <Code>InvalidInstanceID.NotFound</Code>
           <Message>The instance ID 'i-1a2b3c4d' does not exist</Message>
         </Error>
    </Errors>
    <RequestID>ea966190-f9aa-478e-9ede-example</RequestID>
</Response>`
	)
	for _, tc := range []struct {
		body   string
		status int
		want   outcome.Outcome
	}{
		{deleteSample, 200, outcome.Deleted},
		{errorSample, 400, outcome.Refused},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		c := newClient(t, srv.URL)
		err := c.DeleteVolume(ctx, "vol-1234567890abcdef0")
		if got := outcome.Of(err); got != tc.want {
			t.Errorf("HTTP %d: outcome %v, want %v (%v)", tc.status, got, tc.want, err)
		}
		if tc.status != 200 && (err == nil || !strings.Contains(err.Error(), "InvalidInstanceID.NotFound: The instance ID 'i-1a2b3c4d' does not exist") || errors.Is(err, outcome.ErrNotFound)) {
			t.Errorf("error %v: want EC2's code and message, and not a volume NotFound", err)
		}
		srv.Close()
	}
}

// Listing, re-reading and reading quotas change nothing.
func TestReadsAreNotMutating(t *testing.T) {
	f := newFake(t)
	id := f.AddVolume("", ebsfake.Volume{})
	f.SetQuota("", "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 50, "None")
	c := newClient(t, f.URL())
	fl, err := ebs.NewFleetOf(c)
	if err != nil {
		t.Fatal(err)
	}
	fl.List(ctx)
	fl.Quotas(ctx)
	if _, err := fl.Volume(ctx, acct, "us-east-1", id); err != nil {
		t.Fatal(err)
	}
	if n := f.MutatingCalls(); n != 0 || f.TotalCalls() < 3 {
		t.Errorf("%d mutating of %d calls", n, f.TotalCalls())
	}
}
