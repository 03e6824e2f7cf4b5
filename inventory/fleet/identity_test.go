package fleet

import (
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
)

const (
	acctA = "111122223333"
	acctB = "444455556666"
)

func eksAt(name, account, region, endpoint string) inventory.FleetCluster {
	return inventory.FleetCluster{Name: name, Platform: inventory.EKS, Account: account, Location: region,
		Endpoint: endpoint, CAData: []byte("ca"), Status: "ACTIVE"}
}

func listing(cs ...inventory.FleetCluster) []inventory.FleetListing {
	by := map[string]*inventory.FleetListing{}
	var out []inventory.FleetListing
	var order []string
	for _, c := range cs {
		s := c.Scope()
		if by[s] == nil {
			by[s] = &inventory.FleetListing{Platform: c.Platform, Scope: s, Complete: true}
			order = append(order, s)
		}
		by[s].Clusters = append(by[s].Clusters, c)
	}
	for _, s := range order {
		out = append(out, *by[s])
	}
	return out
}

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func member(t *testing.T, f inventory.Fleet, name string) inventory.FleetMember {
	t.Helper()
	m, ok := f.Member(name)
	if !ok {
		var names []string
		for _, m := range f.Members {
			names = append(names, m.Name)
		}
		t.Fatalf("no member %s among %v", name, names)
	}
	return m
}

func readNames(fp Plan) []string {
	var out []string
	for _, r := range fp.Read {
		out = append(out, r.Name)
	}
	return out
}

// A configured cluster and a discovered one that share a name are one
// cluster only when their identities agree; otherwise both hold.
func TestSameNameIsNotSameCluster(t *testing.T) {
	const conf = "clusters:\n  - name: prod\n    context: prod\n"
	east := eksAt("prod", acctA, "us-east-1", "https://EAST.gr7.us-east-1.eks.amazonaws.com")
	west := eksAt("prod", acctA, "us-west-2", "https://WEST.gr7.us-west-2.eks.amazonaws.com")
	now := time.Now()

	t.Run("another API server of the same name is a conflict", func(t *testing.T) {
		fp := assemble(parse(t, conf), true, nil, listing(west), map[string]APIServer{"prod": {host: hostOf(east.Endpoint)}}, nil, now)
		m := member(t, fp.Fleet, "prod@"+acctA+".us-west-2")
		if m.State != inventory.MemberConflict || !strings.Contains(m.Reason, "clusters[0]") || len(fp.Read) != 0 {
			t.Fatalf("discovered %+v, read %v", m, readNames(fp))
		}
		if c := member(t, fp.Fleet, "prod"); c.Discovered {
			t.Fatalf("the configured cluster was joined to another API server's cluster: %+v", c)
		}
		if why := fp.Conflicts["prod"]; !strings.Contains(why, "us-west-2") || !strings.Contains(why, "nothing either could use is deleted") {
			t.Fatalf("the configured cluster does not hold: %q", why)
		}
	})
	t.Run("its own API server joins; the same name elsewhere is another cluster", func(t *testing.T) {
		// The second listing's prod is read as a cluster of its own: not
		// joined again, not a conflict.
		fp := assemble(parse(t, conf), true, nil, listing(west, east), map[string]APIServer{"prod": {host: hostOf(east.Endpoint)}}, nil, now)
		if c := member(t, fp.Fleet, "prod"); !c.Discovered || c.Cloud.Location != "us-east-1" {
			t.Fatalf("configured prod %+v", c)
		}
		w := member(t, fp.Fleet, "prod@"+acctA+".us-west-2")
		if w.State != inventory.MemberRead || len(fp.Conflicts) != 0 || strings.Join(readNames(fp), ",") != "prod@"+acctA+".us-west-2" {
			t.Fatalf("west %+v conflicts %v read %v", w, fp.Conflicts, readNames(fp))
		}
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctA+"/us-west-2", "prod"), " "); got != w.Name {
			t.Fatalf("a tag in us-west-2 naming prod resolves to %s", got)
		}
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctA+"/us-east-1", "prod"), " "); got != "prod" {
			t.Fatalf("a tag in us-east-1 naming prod resolves to %s", got)
		}
	})
	t.Run("an in-cluster entry that says nothing of where it lives is a conflict", func(t *testing.T) {
		fp := assemble(parse(t, "clusters:\n  - name: prod\n    inCluster: true\n"), true, nil, listing(west), nil, nil, now)
		if m := member(t, fp.Fleet, "prod@"+acctA+".us-west-2"); m.State != inventory.MemberConflict || fp.Conflicts["prod"] == "" {
			t.Fatalf("%+v %v", m, fp.Conflicts)
		}
	})
	t.Run("an in-cluster entry that says where it lives joins there only", func(t *testing.T) {
		cfg := parse(t, "clusters:\n  - name: prod\n    inCluster: true\n    account: \""+acctA+"\"\n    location: us-east-1\n")
		fp := assemble(cfg, true, nil, listing(west, east), nil, nil, now)
		if c := member(t, fp.Fleet, "prod"); !c.Discovered || c.Cloud.Location != "us-east-1" {
			t.Fatalf("configured prod %+v", c)
		}
		if w := member(t, fp.Fleet, "prod@"+acctA+".us-west-2"); w.State != inventory.MemberRead || len(fp.Conflicts) != 0 {
			t.Fatalf("west %+v conflicts %v", w, fp.Conflicts)
		}
	})
	t.Run("a declared place that agrees does not override another API server", func(t *testing.T) {
		cfg := parse(t, "clusters:\n  - name: prod\n    context: prod\n    account: \""+acctA+"\"\n    location: us-west-2\n")
		fp := assemble(cfg, true, nil, listing(west), map[string]APIServer{"prod": {host: hostOf(east.Endpoint)}}, nil, now)
		if fp.Conflicts["prod"] == "" {
			t.Fatalf("no conflict: %+v", fp.Fleet.Members)
		}
	})
	t.Run("the same CA is the same cluster, whatever the names", func(t *testing.T) {
		der, bundle := testCA(t)
		c := eksAt("eks-prod-7f3a", acctB, "eu-west-1", "https://X.eks.amazonaws.com")
		c.CAData = bundle
		fp := assemble(parse(t, "clusters:\n  - name: prod\n    inCluster: true\n"), true, nil, listing(c), map[string]APIServer{"prod": {cas: [][]byte{der}}}, nil, now)
		if m := member(t, fp.Fleet, "prod"); !m.Discovered || len(fp.Fleet.Members) != 1 || len(fp.Read) != 0 {
			t.Fatalf("%+v", fp.Fleet.Members)
		}
	})
	t.Run("another CA of the same name is a conflict", func(t *testing.T) {
		der, _ := testCA(t)
		_, other := testCA(t)
		c := west
		c.CAData = other
		fp := assemble(parse(t, "clusters:\n  - name: prod\n    inCluster: true\n"), true, nil, listing(c), map[string]APIServer{"prod": {cas: [][]byte{der}}}, nil, now)
		if fp.Conflicts["prod"] == "" {
			t.Fatalf("no conflict: %+v", fp.Fleet.Members)
		}
	})
	t.Run("two scopes' same-name clusters are two members", func(t *testing.T) {
		other := eksAt("prod", acctB, "us-west-2", "https://OTHER.eks.amazonaws.com")
		fp := assemble(parse(t, conf), true, nil, listing(east, west, other), map[string]APIServer{"prod": {host: hostOf(east.Endpoint)}}, nil, now)
		if len(fp.Fleet.Members) != 3 || len(fp.Read) != 2 {
			t.Fatalf("members %+v read %v", fp.Fleet.Members, readNames(fp))
		}
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctB+"/us-west-2", "prod"), " "); got != "prod@"+acctB+".us-west-2" {
			t.Fatalf("a tag in account B naming prod resolves to %s", got)
		}
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctB+"/eu-west-1", "prod"), " "); got != "prod@"+acctB+".eu-west-1" {
			t.Fatalf("a tag where no prod was discovered resolves to %s, want a cluster nobody read", got)
		}
	})
}

// An out-of-scope declaration covers a discovered cluster only by identity
// and a pin (its endpoint, its creation time), and only until it expires: a
// live cluster in the declared place that the declaration does not pin may
// be one rebuilt in its place, and holds.
func TestOutOfScopeByIdentity(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	legacy := eksAt("legacy", acctA, "us-east-1", "https://NEW.gr7.us-east-1.eks.amazonaws.com")
	legacy.Created = time.Date(2026, 3, 2, 10, 11, 12, 345e6, time.UTC)
	place := "platform: eks\n      account: \"" + acctA + "\"\n      location: us-east-1"
	for _, tc := range []struct {
		name, decl string
		state, why string
	}{
		{"by identity and endpoint", place + "\n      endpoint: https://new.gr7.us-east-1.eks.amazonaws.com:443", inventory.MemberOutOfScope, "decommissioned"},
		{"rebuilt in its place: no pin to tell", place, inventory.MemberConflict, "cannot tell the declared cluster from one rebuilt in its place, so it holds — if it is the declared cluster, pin it with endpoint: https://NEW.gr7.us-east-1.eks.amazonaws.com or created: 2026-03-02T10:11:12Z"},
		{"pinned by its creation time, as aws eks describe-cluster prints it", place + "\n      created: \"2026-03-02T10:11:12.345000+00:00\"", inventory.MemberOutOfScope, "decommissioned"},
		{"pinned by its creation time, to the second", place + "\n      created: 2026-03-02T10:11:12Z", inventory.MemberOutOfScope, "decommissioned"},
		{"rebuilt in its place: created later than pinned", place + "\n      created: 2025-06-01T08:00:00Z", inventory.MemberConflict, "declares \"legacy\" created at 2025-06-01T08:00:00Z, but the live cluster of that name in eks " + acctA + "/us-east-1 was created at 2026-03-02T10:11:12Z: it was rebuilt in its place"},
		{"rebuilt in its place with the same endpoint: the creation time tells", place + "\n      endpoint: https://NEW.gr7.us-east-1.eks.amazonaws.com\n      created: 2025-06-01T08:00:00Z", inventory.MemberConflict, "rebuilt in its place"},
		{"another region: a cluster of its own, read", "platform: eks\n      account: \"" + acctA + "\"\n      location: eu-west-1", inventory.MemberRead, ""},
		{"rebuilt: another API server", place + "\n      endpoint: https://OLD.gr7.us-east-1.eks.amazonaws.com", inventory.MemberConflict, "rebuilt"},
		{"expired", place + "\n      endpoint: https://NEW.gr7.us-east-1.eks.amazonaws.com\n      expires: 2026-11-01", inventory.MemberConflict, "expired on 2026-11-01"},
		{"not yet expired", place + "\n      endpoint: https://NEW.gr7.us-east-1.eks.amazonaws.com\n      expires: 2026-12-01", inventory.MemberOutOfScope, "decommissioned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  outOfScope:\n    - name: legacy\n      reason: decommissioned\n      "+tc.decl+"\n")
			fp := assemble(cfg, true, nil, listing(legacy), map[string]APIServer{"a": {host: "a.example:443"}}, nil, now)
			m := member(t, fp.Fleet, "legacy")
			if m.State != tc.state || !strings.Contains(m.Reason, tc.why) {
				t.Fatalf("%s %q, want %s %q", m.State, m.Reason, tc.state, tc.why)
			}
			if (m.State == inventory.MemberRead) != (len(fp.Read) == 1) {
				t.Fatalf("read %v", readNames(fp))
			}
			// Cloud evidence of its place (a subnet tag) names the live
			// cluster, in the state it took, never the declaration.
			names := fp.Fleet.Resolve(inventory.EKS, acctA+"/us-east-1", "legacy")
			if len(names) != 1 {
				t.Fatalf("a tag names %v", names)
			}
			if r, _ := fp.Fleet.Member(names[0]); r.State != tc.state || !r.Discovered {
				t.Fatalf("a tag names %+v", r)
			}
		})
	}
	t.Run("the declaration that pins it covers it, beside the one of the cluster it replaced", func(t *testing.T) {
		old := "    - name: legacy\n      reason: the old one\n      " + place + "\n      endpoint: https://OLD.gr7.us-east-1.eks.amazonaws.com\n"
		cur := "    - name: legacy\n      reason: the new one, a sandbox\n      " + place + "\n      created: 2026-03-02T10:11:12Z\n"
		for _, tc := range []struct{ decls, rule string }{{old + cur, "fleet.outOfScope[1]"}, {cur + old, "fleet.outOfScope[0]"}} {
			cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  outOfScope:\n"+tc.decls)
			fp := assemble(cfg, true, nil, listing(legacy), map[string]APIServer{"a": {host: "a.example:443"}}, nil, now)
			if m := member(t, fp.Fleet, "legacy"); m.State != inventory.MemberOutOfScope || m.Rule != tc.rule || m.Reason != "the new one, a sandbox" {
				t.Fatalf("%s by %s: %q", m.State, m.Rule, m.Reason)
			}
		}
	})
	t.Run("pinned by a creation time discovery does not report: holds", func(t *testing.T) {
		cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  outOfScope:\n    - name: legacy\n      reason: decommissioned\n      "+place+"\n      created: 2026-03-02T10:11:12Z\n")
		unknown := legacy
		unknown.Created = time.Time{}
		fp := assemble(cfg, true, nil, listing(unknown), map[string]APIServer{"a": {host: "a.example:443"}}, nil, now)
		if m := member(t, fp.Fleet, "legacy"); m.State != inventory.MemberConflict || !strings.Contains(m.Reason, "has no creation time discovery reports") {
			t.Fatalf("%s %q", m.State, m.Reason)
		}
	})
	t.Run("a declaration nothing discovered answers for tag evidence where it lives", func(t *testing.T) {
		cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  outOfScope:\n    - name: gone\n      reason: decommissioned\n      platform: eks\n      account: \""+acctA+"\"\n      location: us-east-1\n")
		fp := assemble(cfg, true, nil, listing(legacy), nil, nil, now)
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctA+"/us-east-1", "gone"), " "); got != "gone" {
			t.Fatalf("resolves to %s", got)
		}
		if got := strings.Join(fp.Fleet.Resolve(inventory.EKS, acctB+"/us-east-1", "gone"), " "); got == "gone" {
			t.Fatal("a tag in another account names the declared cluster")
		}
	})
}

// testCA is a CA certificate of a cluster of its own: its DER and PEM.
func testCA(t *testing.T) ([]byte, []byte) {
	t.Helper()
	der, bundle, err := testenv.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return der, bundle
}
