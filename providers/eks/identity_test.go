package eks_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/eks/stsfake"
)

const otherAccount = "444455556666"

// The client's identity is asked at STSEndpoint, not at the EKS endpoint,
// and is the account's.
func TestIdentityOfTheClientIsConfirmed(t *testing.T) {
	f, s, c := setup(t)
	who, calls, err := c.Identity().Confirm(context.Background(), account)
	if err != nil || who.Account != account || who.ARN != roleARN || calls != 1 {
		t.Fatalf("Confirm = %+v, %d calls, %v", who, calls, err)
	}
	if n := s.Calls(stsfake.OpGetCallerIdentity); n != 1 {
		t.Errorf("STS served %d GetCallerIdentity, want 1", n)
	}
	if n := f.TotalCalls(); n != 0 {
		t.Errorf("the EKS endpoint got %d calls: %v", n, f.CallCounts())
	}
}

// Credentials of another account are refused by name: the caller's ARN
// and account, and the account wanted.
func TestIdentityOfAnotherAccountIsRefused(t *testing.T) {
	_, s, c := setup(t)
	other := "arn:aws:sts::" + otherAccount + ":assumed-role/reclaim/reclaim"
	s.Add(stsfake.Identity{AccessKeyID: akid, SecretAccessKey: secret, ARN: other, Account: otherAccount, UserID: "AROAOTHER:reclaim"})
	who, _, err := c.Identity().Confirm(context.Background(), account)
	var wrong *eks.WrongAccountError
	if !errors.As(err, &wrong) || wrong.Want != account || wrong.Caller.Account != otherAccount || who.ARN != other {
		t.Fatalf("Confirm = %+v, %v; want a WrongAccountError", who, err)
	}
	if msg := err.Error(); !strings.Contains(msg, other) || !strings.Contains(msg, "not of account "+account) {
		t.Errorf("error %q does not name the caller and the account", msg)
	}
}

// A role of another account lands there: the assumed role's identity is
// that account's, whatever the scope says.
func TestIdentityOfARoleInAnotherAccountIsRefused(t *testing.T) {
	noProfiles(t)
	t.Setenv("AWS_ACCESS_KEY_ID", akid)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	s := stsfake.New(stsfake.Identity{AccessKeyID: akid, SecretAccessKey: secret, ARN: "arn:aws:iam::" + account + ":user/reclaim", Account: account})
	s.Start()
	t.Cleanup(s.Close)
	role := "arn:aws:iam::" + otherAccount + ":role/reclaim"
	s.AddRole(role, "")
	t.Setenv("AWS_ENDPOINT_URL_STS", s.URL()) // where the role is assumed
	id, err := eks.NewIdentity(context.Background(), awsclient.Service{Account: account, Region: region, RoleARN: role, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	who, _, err := id.Confirm(context.Background(), account)
	var wrong *eks.WrongAccountError
	if !errors.As(err, &wrong) || who.ARN != "arn:aws:sts::"+otherAccount+":assumed-role/reclaim/reclaim" {
		t.Fatalf("Confirm = %+v, %v; want the role's account refused", who, err)
	}
	if s.Calls("AssumeRole") != 1 || s.Calls(stsfake.OpGetCallerIdentity) != 1 {
		t.Errorf("STS calls %v, want one AssumeRole and one GetCallerIdentity", s.CallCounts())
	}
}

// STS refusing the credentials leaves whose they are unknown: an error,
// never a confirmation.
func TestIdentityThatSTSRefusesIsAnError(t *testing.T) {
	s := stsfake.New() // knows no key
	s.Start()
	t.Cleanup(s.Close)
	c, err := eks.New(context.Background(), eks.Options{STSEndpoint: s.URL(), Service: awsclient.Service{Account: account, Region: region,
		Endpoint: "http://127.0.0.1:1", Credentials: credentials.NewStaticCredentialsProvider(akid, secret, ""), MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	who, _, err := c.Identity().Confirm(context.Background(), account)
	var wrong *eks.WrongAccountError
	if err == nil || errors.As(err, &wrong) || !strings.Contains(err.Error(), "InvalidClientTokenId") || who.Account != "" {
		t.Fatalf("Confirm = %+v, %v; want STS's refusal", who, err)
	}
}

// Under WithIdentityMemo a run asks once per identity, however many
// discoverers of it ask at once; another run asks again.
func TestIdentityIsAskedOncePerRun(t *testing.T) {
	noProfiles(t)
	t.Setenv("AWS_ACCESS_KEY_ID", akid)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	s := stsfake.New(stsfake.Identity{AccessKeyID: akid, SecretAccessKey: secret, ARN: roleARN, Account: account})
	s.Start()
	t.Cleanup(s.Close)
	var ids []*eks.Identity
	for _, r := range []string{"us-east-1", "us-west-2", "eu-west-1"} {
		id, err := eks.NewIdentity(context.Background(), awsclient.Service{Account: account, Region: r, Endpoint: s.URL(), MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	run := func() int {
		ctx := eks.WithIdentityMemo(context.Background())
		var mu sync.Mutex
		var wg sync.WaitGroup
		total := 0
		for i := range 9 {
			wg.Go(func() {
				_, calls, err := ids[i%len(ids)].Confirm(ctx, account)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += calls
				mu.Unlock()
			})
		}
		wg.Wait()
		return total
	}
	if n := run(); n != 1 || s.Calls(stsfake.OpGetCallerIdentity) != 1 {
		t.Fatalf("one run: %d calls counted, STS served %d; want 1", n, s.Calls(stsfake.OpGetCallerIdentity))
	}
	if run(); s.Calls(stsfake.OpGetCallerIdentity) != 2 {
		t.Errorf("two runs: STS served %d, want 2", s.Calls(stsfake.OpGetCallerIdentity))
	}
}

func noProfiles(t *testing.T) {
	t.Helper()
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}
