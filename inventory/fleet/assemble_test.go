package fleet

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
)

func TestAssembleFleet(t *testing.T) {
	cfg, err := config.Parse([]byte(`clusters:
  - name: prod-a
    context: a
  - name: prod-b
    context: b
    cloudName: eks-prod-b
  - name: prod-c
    context: c
fleet:
  exclude: ["sandbox-*"]
  excludeLabels: {reclaim.dev/skip: ""}
  outOfScope:
    - name: legacy
      reason: decommissioned
      platform: eks
      account: "111122223333"
      location: us-east-1
    - name: never-seen
      reason: named only by a subnet tag
      platform: eks
      account: "111122223333"
      location: us-east-1
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eks := func(name, endpoint string, labels map[string]string) inventory.FleetCluster {
		return inventory.FleetCluster{Name: name, Platform: inventory.EKS, Account: "111122223333", Location: "us-east-1",
			Endpoint: endpoint, CAData: []byte("ca"), Labels: labels}
	}
	listings := []inventory.FleetListing{{Platform: inventory.EKS, Scope: "111122223333/us-east-1", Complete: true, Clusters: []inventory.FleetCluster{
		eks("prod-a", "https://a.example", nil),                                          // by name
		eks("eks-prod-b", "https://b.example", nil),                                      // by cloudName
		eks("renamed-c", "https://C.example:443", nil),                                   // by API server
		eks("sandbox-1", "https://s.example", nil),                                       // excluded by name
		eks("tagged", "https://t.example", map[string]string{"reclaim.dev/skip": "yes"}), // by label
		eks("legacy", "https://l.example", nil),                                          // out of scope
		eks("batch", "https://batch.example", nil),                                       // read, discovered
	}}}
	tokens := 0
	ds := []Discoverer{{Platform: inventory.EKS, Scope: "111122223333/us-east-1", Token: func(inventory.FleetCluster) oauth2.TokenSource {
		tokens++
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})
	}}}
	fp := assemble(cfg, true, ds, listings, map[string]APIServer{
		"prod-a": {host: hostOf("https://a.example")},
		"prod-b": {host: hostOf("https://b.example")},
		"prod-c": {host: hostOf("https://c.example")},
	}, nil, time.Now())
	want := map[string]struct{ state, rule string }{
		"prod-a":     {inventory.MemberRead, "clusters[0]"},
		"prod-b":     {inventory.MemberRead, "clusters[1]"},
		"prod-c":     {inventory.MemberRead, "clusters[2]"},
		"sandbox-1":  {inventory.MemberExcluded, `fleet.exclude[0] "sandbox-*"`},
		"tagged":     {inventory.MemberExcluded, "fleet.excludeLabels reclaim.dev/skip"},
		"legacy":     {inventory.MemberConflict, "fleet.outOfScope[0]"}, // no endpoint: it may be a cluster rebuilt in its place
		"never-seen": {inventory.MemberOutOfScope, "fleet.outOfScope[1]"},
		"batch":      {inventory.MemberRead, "discovered in eks 111122223333/us-east-1"},
	}
	if len(fp.Fleet.Members) != len(want) {
		t.Fatalf("members %+v", fp.Fleet.Members)
	}
	for _, m := range fp.Fleet.Members {
		w, ok := want[m.Name]
		if !ok || m.State != w.state || m.Rule != w.rule {
			t.Errorf("%s: %s by %q, want %+v", m.Name, m.State, m.Rule, w)
		}
	}
	for _, n := range []string{"prod-a", "prod-b", "prod-c"} {
		if m, _ := fp.Fleet.Member(n); !m.Configured || !m.Discovered {
			t.Errorf("%s not joined with its discovered cluster: %+v", n, m)
		}
	}
	if strings.Join(fp.Fleet.Resolve(inventory.EKS, "111122223333/us-east-1", "eks-prod-b"), " ") != "prod-b" {
		t.Error("cloud evidence naming eks-prod-b does not resolve to prod-b")
	}
	if len(fp.Read) != 1 || fp.Read[0].Name != "batch" || !fp.Read[0].Discovered || fp.Read[0].Token == nil || tokens != 1 {
		t.Fatalf("read %+v (tokens %d), want batch alone with a token", fp.Read, tokens)
	}
}

// assemble assembles the fleet with no shared reads: which reads the kinds
// that are on ask for is the wiring's (internal/app TestReadsFollowTheKinds).
func assemble(cfg *config.Config, discovers bool, ds []Discoverer, listings []inventory.FleetListing, apis map[string]APIServer, networks []inventory.NetworkListing, now time.Time) Plan {
	return Assemble(cfg, nil, discovers, ds, listings, apis, networks, now)
}
