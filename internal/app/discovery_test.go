package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/fleet"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
)

// identityWorld is account acctA's EKS in two regions and its EC2 (the
// regions listing), and an STS whose keys are the environment's.
type identityWorld struct {
	sts *stsfake.Server
	ec2 *ec2fake.Server
	eks map[string]*eksfake.Server
}

const (
	acctA = "111122223333"
	acctB = "444455556666"

	identityKey    = "AKIDEXAMPLE"
	identitySecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func newIdentityWorld(t *testing.T, keysAccount string) *identityWorld {
	t.Helper()
	noAWSProfiles(t)
	t.Setenv("AWS_ACCESS_KEY_ID", identityKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", identitySecret)
	w := &identityWorld{eks: map[string]*eksfake.Server{}}
	w.sts = stsfake.New(stsfake.Identity{AccessKeyID: identityKey, SecretAccessKey: identitySecret,
		ARN: "arn:aws:iam::" + keysAccount + ":user/reclaim", Account: keysAccount, UserID: "AIDAEXAMPLE"})
	w.sts.Start()
	t.Cleanup(w.sts.Close)
	w.ec2 = ec2fake.New(ec2fake.Options{Region: "us-east-1", Account: acctA})
	w.ec2.SetRegions(ec2fake.Region{Name: "us-east-1"}, ec2fake.Region{Name: "us-west-2"})
	w.ec2.Start()
	t.Cleanup(w.ec2.Close)
	for _, r := range []string{"us-east-1", "us-west-2"} {
		f := eksfake.New(eksfake.Options{Account: acctA, Region: r})
		f.Start()
		t.Cleanup(f.Close)
		w.eks[r] = f
	}
	return w
}

// config lists both regions of acctA in fleet.eks, reached with extra
// (e.g. a roleARN line).
func (w *identityWorld) config(t *testing.T, extra string) []fleet.Discoverer {
	t.Helper()
	yaml := "clusters:\n  - name: a\n    context: a\nfleet:\n  eks:\n"
	for _, r := range []string{"us-east-1", "us-west-2"} {
		yaml += fmt.Sprintf("    - account: \"%s\"\n      region: %s\n      endpoint: %s\n      stsEndpoint: %s\n      ec2Endpoint: %s\n%s",
			acctA, r, w.eks[r].URL(), w.sts.URL(), w.ec2.URL(), extra)
	}
	ds, err := Discoverers(context.Background(), parse(t, yaml), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// run is one pass of discovery, as a run makes it.
func (w *identityWorld) run(ds []fleet.Discoverer) []inventory.FleetListing {
	_, ls := fleet.Discover(eks.WithIdentityMemo(context.Background()), ds)
	return ls
}

// An identity of another account would list that account's clusters (here
// none) as a complete, empty listing of acctA: every listing of the scope,
// each region and the account's regions, is incomplete instead, names the
// caller and says what to fix, and nothing is listed with it.
func TestDiscoveryAsAnotherAccountIsIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name, extra, fix string
	}{
		{"the pod's identity", "", "fleet.eks[0] sets no profile or roleARN, and reclaim's own identity (IRSA, Pod Identity, the environment's keys) is of the wrong account — set roleARN there to a role of account " + acctA + " that it may assume"},
		{"a role of another account", "      roleARN: arn:aws:iam::" + acctB + ":role/reclaim\n",
			"the role in fleet.eks[0] (roleARN arn:aws:iam::" + acctB + ":role/reclaim) lands in the wrong account — fix roleARN: a role of account " + acctA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The keys are acctA's; the role, if any, lands in acctB.
			keys := acctB
			if tc.extra != "" {
				keys = acctA
			}
			w := newIdentityWorld(t, keys)
			w.sts.AddRole("arn:aws:iam::"+acctB+":role/reclaim", "")
			t.Setenv("AWS_ENDPOINT_URL_STS", w.sts.URL()) // where the role is assumed
			ls := w.run(w.config(t, tc.extra))
			if len(ls) != 3 {
				t.Fatalf("%d listings, want the two regions' and the account's: %+v", len(ls), ls)
			}
			caller := "arn:aws:iam::" + acctB + ":user/reclaim"
			if tc.extra != "" {
				caller = "arn:aws:sts::" + acctB + ":assumed-role/reclaim/reclaim"
			}
			for _, l := range ls {
				// The entry that configures the scope: its own region's, or
				// the account's first for its regions.
				entry := "fleet.eks[0]"
				if l.Scope == acctA+"/us-west-2" {
					entry = "fleet.eks[1]"
				}
				want := "discovery for account " + acctA + " ran as " + caller + " of account " + acctB + ": " + strings.ReplaceAll(tc.fix, "fleet.eks[0]", entry)
				if l.Complete || len(l.Clusters) != 0 || len(l.Regions) != 0 || l.Problem != want {
					t.Errorf("%s %s: complete %v, problem %q; want incomplete, %q", l.Platform, l.Scope, l.Complete, l.Problem, want)
				}
			}
			if n := w.sts.Calls(stsfake.OpGetCallerIdentity); n != 1 {
				t.Errorf("GetCallerIdentity: %d calls, want 1 (one identity per run)", n)
			}
			for r, f := range w.eks {
				if n := f.TotalCalls(); n != 0 {
					t.Errorf("EKS %s: %d calls as another account", r, n)
				}
			}
			if n := w.ec2.Calls(ec2fake.ActionDescribeRegions); n != 0 {
				t.Errorf("DescribeRegions: %d calls as another account", n)
			}
		})
	}
}

// The account's own identity lists as before, with one GetCallerIdentity
// per run for every region and the regions listing, counted once.
func TestDiscoveryAsItsAccountListsAndAsksOncePerRun(t *testing.T) {
	w := newIdentityWorld(t, acctA)
	w.eks["us-west-2"].Add(eksfake.Cluster{Name: "web", Endpoint: "https://web.eks.example"})
	ds := w.config(t, "")
	calls := 0
	for _, l := range w.run(ds) {
		if !l.Complete {
			t.Fatalf("%s %s incomplete: %s", l.Platform, l.Scope, l.Problem)
		}
		if l.Scope == acctA+"/us-west-2" && (len(l.Clusters) != 1 || l.Clusters[0].Name != "web") {
			t.Errorf("us-west-2 listed %+v", l.Clusters)
		}
		calls += l.Calls
	}
	// One GetCallerIdentity, one DescribeRegions, one ListClusters per
	// region and one DescribeCluster.
	if calls != 5 {
		t.Errorf("the listings count %d calls, want 5", calls)
	}
	w.run(ds)
	if n := w.sts.Calls(stsfake.OpGetCallerIdentity); n != 2 {
		t.Errorf("GetCallerIdentity: %d calls in 2 runs, want 2", n)
	}
}

// STS refusing the keys leaves whose they are unknown: incomplete, and the
// report says what to check.
func TestDiscoveryWhoseIdentityIsUnknownIsIncomplete(t *testing.T) {
	w := newIdentityWorld(t, acctA)
	w.sts.Add(stsfake.Identity{AccessKeyID: "AKIDSOMEONEELSE", Account: acctA})
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDUNKNOWN")
	for _, l := range w.run(w.config(t, "")) {
		if l.Complete || !strings.Contains(l.Problem, "discovery for account "+acctA+" could not confirm whose identity it runs as") ||
			!strings.Contains(l.Problem, "InvalidClientTokenId") || !strings.Contains(l.Problem, "check the credentials fleet.eks[") {
			t.Errorf("%s %s: complete %v, problem %q", l.Platform, l.Scope, l.Complete, l.Problem)
		}
	}
}
