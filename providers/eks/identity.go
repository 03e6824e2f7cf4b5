package eks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"reclaim.dev/reclaim/providers/awsclient"
)

// OpGetCallerIdentity is GetCallerIdentity's name, the key of
// Identity.Calls.
const OpGetCallerIdentity = "GetCallerIdentity"

// CallerAPI is what an Identity calls of STS, with the SDK's signature.
type CallerAPI interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, optFns ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

var _ CallerAPI = (*sts.Client)(nil)

// Caller is who STS says an identity is.
type Caller struct{ Account, ARN string }

// Identity asks STS who one discovery identity is (sts:GetCallerIdentity):
// a listing made with it counts for an account only when it is that
// account's. A role or profile that lands in another account lists that
// account's clusters, usually none, and an empty listing looks like a
// complete one. Under WithIdentityMemo a run asks once per identity, however
// many scopes and regions use it.
type Identity struct {
	api CallerAPI
	// key is what makes two Identities one: how the credentials are
	// reached (profile, role, external id) and where STS is asked.
	key   string
	calls awsclient.Calls
}

// identityKey is the memo key of a Service's identity. Credentials given
// in the Service (tests) make an identity no other Identity shares.
func identityKey(s awsclient.Service, stsEndpoint string) string {
	if s.Credentials != nil {
		return fmt.Sprintf("credentials #%d", ownCredentials.Add(1))
	}
	return fmt.Sprintf("profile %q role %q external id %q sts %q", s.Profile, s.RoleARN, s.ExternalID, stsEndpoint)
}

var ownCredentials atomic.Int64

// NewIdentity builds the STS client of s's identity (its profile, role and
// external id) with the clients' retryer and pacing; s.Endpoint is STS's
// ("" for the SDK's own, AWS_ENDPOINT_URL_STS included). It calls nothing.
func NewIdentity(ctx context.Context, s awsclient.Service) (*Identity, error) {
	c, err := s.Load(ctx, "sts", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if err != nil {
		return nil, err
	}
	return newIdentity(c, c.Endpoint, identityKey(s, s.Endpoint)), nil
}

// newIdentity is the Identity of a loaded client's credentials, asked at
// stsEndpoint when it is set (else where the SDK resolves STS), with c's
// retryer and pacing.
func newIdentity(c awsclient.Client, stsEndpoint *string, key string) *Identity {
	api := sts.NewFromConfig(c.Config, func(so *sts.Options) {
		// c's endpoint is its own service's (EKS's), not STS's.
		var serviceEndpoint *string
		c.Into(&serviceEndpoint, &so.Retryer, &so.APIOptions, c.Pace)
		if stsEndpoint != nil {
			so.BaseEndpoint = stsEndpoint
		}
	})
	return NewIdentityWithAPI(api, key)
}

// NewIdentityWithAPI asks any CallerAPI (tests); Identities of one key
// share their answer under WithIdentityMemo.
func NewIdentityWithAPI(api CallerAPI, key string) *Identity {
	return &Identity{api: api, key: key}
}

// Calls says how many GetCallerIdentity calls this Identity made.
func (i *Identity) Calls() int { return i.calls.Of(OpGetCallerIdentity) }

// WrongAccountError is an identity of another account than the scope's.
type WrongAccountError struct {
	Want   string
	Caller Caller
}

func (e *WrongAccountError) Error() string {
	return fmt.Sprintf("it is %s of account %s, not of account %s", e.Caller.ARN, e.Caller.Account, e.Want)
}

// Confirm checks that the identity is account's. It returns the caller,
// the calls it made (0 when the run's memo answered), and a
// *WrongAccountError when STS says the identity is another account's, or
// STS's error when it cannot say (then whose it is is unknown).
func (i *Identity) Confirm(ctx context.Context, account string) (Caller, int, error) {
	if i == nil {
		// A client made with NewWithAPI: nothing confirms it.
		return Caller{}, 0, errors.New("no STS client to confirm the identity with")
	}
	c, calls, err := i.Who(ctx)
	if err == nil && c.Account != account {
		err = &WrongAccountError{Want: account, Caller: c}
	}
	return c, calls, err
}

// Who is who STS says the identity is, and the calls it made to learn
// it; under WithIdentityMemo, the run's first answer for its key (0 calls
// after the first).
func (i *Identity) Who(ctx context.Context) (Caller, int, error) {
	m, _ := ctx.Value(identityMemoKey{}).(*identityMemo)
	if m == nil {
		c, err := i.who(ctx)
		return c, 1, err
	}
	m.mu.Lock()
	e := m.by[i.key]
	if e == nil {
		e = &identityEntry{}
		m.by[i.key] = e
	}
	m.mu.Unlock()
	calls := 0
	e.once.Do(func() { e.c, e.err = i.who(ctx); calls = 1 })
	return e.c, calls, e.err
}

func (i *Identity) who(ctx context.Context) (Caller, error) {
	i.calls.Add(OpGetCallerIdentity)
	o, err := i.api.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return Caller{}, err // the SDK's names the operation
	}
	c := Caller{Account: aws.ToString(o.Account), ARN: aws.ToString(o.Arn)}
	if c.Account == "" {
		return c, fmt.Errorf("sts GetCallerIdentity answered no account (arn %q)", c.ARN)
	}
	return c, nil
}

// identityMemo shares each identity's answer among a run's discoverers.
type identityMemo struct {
	mu sync.Mutex
	by map[string]*identityEntry
}

type identityEntry struct {
	once sync.Once
	c    Caller
	err  error
}

type identityMemoKey struct{}

// WithIdentityMemo makes every Identity under ctx ask STS once per
// identity: a run's discoverers of every region and account that one
// identity reaches share a single GetCallerIdentity.
func WithIdentityMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, identityMemoKey{}, &identityMemo{by: map[string]*identityEntry{}})
}
