package eks_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
)

const (
	account = "123456789012"
	region  = "us-east-1"
	akid    = "AKIDEKSTEST"
	secret  = "eks-test-secret"
	roleARN = "arn:aws:sts::123456789012:assumed-role/reclaim/reclaim"
)

func setup(t *testing.T) (*eksfake.Server, *stsfake.Server, *eks.Client) {
	t.Helper()
	f := eksfake.New(eksfake.Options{Account: account, Region: region})
	f.Start()
	t.Cleanup(f.Close)
	s := stsfake.New(stsfake.Identity{AccessKeyID: akid, SecretAccessKey: secret, ARN: roleARN, Account: account, UserID: "AROAEXAMPLE:reclaim"})
	s.Start()
	t.Cleanup(s.Close)
	c, err := eks.New(context.Background(), eks.Options{STSEndpoint: s.URL(), Service: awsclient.Service{Account: account, Region: region, Endpoint: f.URL(),
		Credentials: credentials.NewStaticCredentialsProvider(akid, secret, ""), MaxAttempts: 5, MaxBackoff: 10 * time.Millisecond, RequestsPerSecond: 1000, Burst: 1000,
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })}})
	if err != nil {
		t.Fatal(err)
	}
	return f, s, c
}

func TestDiscoverPagesAndConverts(t *testing.T) {
	f, _, c := setup(t)
	for i := range 250 {
		f.Add(eksfake.Cluster{Name: fmt.Sprintf("c-%03d", i), Endpoint: fmt.Sprintf("https://%03d.eks.example", i), CAData: []byte("PEM"),
			VPC: "vpc-1", Subnets: []string{"subnet-a", "subnet-b"}, Tags: map[string]string{"team": "ml"},
			Created: time.Date(2026, 3, 2, 10, 11, 12, 345e6, time.UTC).Add(time.Duration(i) * time.Hour)})
	}
	l := c.Discover(context.Background())
	if !l.Complete || len(l.Clusters) != 250 {
		t.Fatalf("complete %v, %d clusters: %s", l.Complete, len(l.Clusters), l.Problem)
	}
	got := l.Clusters[7]
	want := inventory.FleetCluster{Name: "c-007", Platform: inventory.EKS, ID: "arn:aws:eks:us-east-1:123456789012:cluster/c-007", Account: account,
		Location: region, Network: "vpc-1", Endpoint: "https://007.eks.example", Status: "ACTIVE"}
	if got.Name != want.Name || got.ID != want.ID || got.Network != want.Network || got.Endpoint != want.Endpoint || got.Status != want.Status ||
		string(got.CAData) != "PEM" || len(got.Subnets) != 2 || got.Labels["team"] != "ml" || got.Platform != inventory.EKS || got.Location != region {
		t.Fatalf("got %+v", got)
	}
	// Its creation time tells it from a cluster rebuilt in its place.
	if w := time.Date(2026, 3, 2, 17, 11, 12, 345e6, time.UTC); !got.Created.Equal(w) {
		t.Fatalf("created %v, want %v", got.Created, w)
	}
	if n := f.Calls(eksfake.OpListClusters); n != 3 {
		t.Errorf("%d ListClusters calls, want 3 (pages of 100)", n)
	}
	if n := f.Calls(eksfake.OpDescribeCluster); n != 250 || l.Calls != 253 {
		t.Errorf("%d DescribeCluster calls, %d counted, want 250 and 253", n, l.Calls)
	}
}

func TestDiscoverFailsClosed(t *testing.T) {
	t.Run("throttled, retried", func(t *testing.T) {
		f, _, c := setup(t)
		f.Add(eksfake.Cluster{Name: "a"})
		f.ThrottleNext(2)
		if l := c.Discover(context.Background()); !l.Complete || len(l.Clusters) != 1 {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("access denied", func(t *testing.T) {
		f, _, c := setup(t)
		f.Add(eksfake.Cluster{Name: "a"})
		f.Deny(true)
		l := c.Discover(context.Background())
		if l.Complete || len(l.Clusters) != 0 || !strings.Contains(l.Problem, "eks:ListClusters and eks:DescribeCluster") {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("deleted between list and describe", func(t *testing.T) {
		f, _, c := setup(t)
		f.Add(eksfake.Cluster{Name: "a"}, eksfake.Cluster{Name: "b"})
		f.DeleteOnDescribe("b")
		if l := c.Discover(context.Background()); !l.Complete || len(l.Clusters) != 1 || l.Clusters[0].Name != "a" {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("describe fails", func(t *testing.T) {
		f, _, c := setup(t)
		f.Add(eksfake.Cluster{Name: "a"}, eksfake.Cluster{Name: "b"})
		f.FailDescribe("b", 100)
		if l := c.Discover(context.Background()); l.Complete || len(l.Clusters) != 0 || !strings.Contains(l.Problem, "cluster b") {
			t.Fatalf("%+v", l)
		}
	})
}

func TestTokenIsAcceptedOnlyForItsCluster(t *testing.T) {
	_, s, c := setup(t)
	tok, err := c.TokenSource("prod-a").Token()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, eks.TokenPrefix) || time.Until(tok.Expiry) > eks.TokenLifetime || time.Until(tok.Expiry) < 13*time.Minute {
		t.Fatalf("token %q expires %s", tok.AccessToken[:20], tok.Expiry)
	}
	ctx := context.Background()
	arn, err := s.Verify(ctx, tok.AccessToken, "prod-a")
	if err != nil || arn != roleARN {
		t.Fatalf("Verify = %q, %v", arn, err)
	}
	if _, err := s.Verify(ctx, tok.AccessToken, "prod-b"); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("a token for prod-a was accepted for prod-b: %v", err)
	}
	tampered := tok.AccessToken[:len(tok.AccessToken)-4] + "AAAA"
	if _, err := s.Verify(ctx, tampered, "prod-a"); err == nil {
		t.Fatal("a tampered token was accepted")
	}
	s.SetClock(func() time.Time { return time.Now().Add(16 * time.Minute) })
	if _, err := s.Verify(ctx, tok.AccessToken, "prod-a"); err == nil || !strings.Contains(err.Error(), "ExpiredToken") {
		t.Fatalf("an expired token was accepted: %v", err)
	}
}

func TestTokenIsCachedAndNeverInErrors(t *testing.T) {
	_, _, c := setup(t)
	ts := c.TokenSource("prod-a")
	a, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ts.Token()
	if a.AccessToken != b.AccessToken {
		t.Error("a fresh token was minted for every request")
	}
	// A client without credentials says so, and shows no token.
	bad, err := eks.New(context.Background(), eks.Options{STSEndpoint: "http://127.0.0.1:1", Service: awsclient.Service{Account: account, Region: region,
		Credentials: credentials.NewStaticCredentialsProvider("", "", "")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.TokenSource("prod-a").Token(); err == nil || strings.Contains(err.Error(), eks.TokenPrefix) {
		t.Fatalf("err = %v", err)
	}
}

// Credentials that reach another account list its clusters:
// the listing must not complete this scope with them.
func TestDiscoverRefusesClustersOfAnotherScope(t *testing.T) {
	f := eksfake.New(eksfake.Options{Account: "444455556666", Region: region})
	f.Start()
	t.Cleanup(f.Close)
	f.Add(eksfake.Cluster{Name: "prod"})
	c, err := eks.New(context.Background(), eks.Options{Service: awsclient.Service{Account: account, Region: region, Endpoint: f.URL(),
		Credentials: credentials.NewStaticCredentialsProvider(akid, secret, ""), MaxAttempts: 2, RequestsPerSecond: 1000, Burst: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	l := c.Discover(context.Background())
	if l.Complete || len(l.Clusters) != 0 || !strings.Contains(l.Problem, "not "+account+" in "+region) {
		t.Fatalf("complete %v, %d clusters, problem %q", l.Complete, len(l.Clusters), l.Problem)
	}
}
