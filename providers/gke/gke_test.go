package gke_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gke"
	"reclaim.dev/reclaim/providers/gke/gkefake"
)

func setup(t *testing.T) (*gkefake.Server, *gke.Client) {
	t.Helper()
	f := gkefake.New()
	f.Start()
	t.Cleanup(f.Close)
	c, err := gke.New(context.Background(), gke.Options{Endpoint: f.Endpoint(), WithoutAuthentication: true, RetryInitial: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestDiscoverEveryLocation(t *testing.T) {
	f, c := setup(t)
	f.Add(gkefake.Cluster{Project: "proj-one", Location: "us-east1", Name: "regional", Endpoint: "34.1.2.3", CAData: []byte("PEM"),
		Network: "projects/proj-one/global/networks/default", Subnetwork: "projects/proj-one/regions/us-east1/subnetworks/gke",
		Labels: map[string]string{"team": "ml"}, Created: time.Date(2026, 3, 2, 10, 11, 12, 0, time.UTC)},
		gkefake.Cluster{Project: "proj-one", Location: "us-east1-b", Name: "zonal"},
		gkefake.Cluster{Project: "proj-two", Location: "us-east1", Name: "elsewhere"})
	l := c.Discover(context.Background(), "proj-one")
	if !l.Complete || len(l.Clusters) != 2 || l.Calls != 1 {
		t.Fatalf("%+v", l)
	}
	got := l.Clusters[0]
	if got.Name != "regional" || got.Platform != inventory.GKE || got.ID != "projects/proj-one/locations/us-east1/clusters/regional" ||
		got.Project != "proj-one" || got.Location != "us-east1" || got.Network != "default" || len(got.Subnets) != 1 || got.Subnets[0] != "gke" ||
		got.Endpoint != "https://34.1.2.3" || string(got.CAData) != "PEM" || got.Labels["team"] != "ml" || got.Status != "RUNNING" {
		t.Fatalf("got %+v", got)
	}
	// Its creation time tells it from a cluster rebuilt in its place.
	if !got.Created.Equal(time.Date(2026, 3, 2, 10, 11, 12, 0, time.UTC)) {
		t.Fatalf("created %v", got.Created)
	}
	if z := l.Clusters[1]; z.Name != "zonal" || z.Region() != "us-east1" || !z.Created.IsZero() {
		t.Fatalf("zonal %+v (region %s)", z, z.Region())
	}
}

func TestDiscoverFailsClosed(t *testing.T) {
	t.Run("missing zones", func(t *testing.T) {
		f, c := setup(t)
		f.Add(gkefake.Cluster{Project: "proj-one", Location: "us-east1", Name: "a"})
		f.MissingZones("proj-one", "us-east1-c")
		if l := c.Discover(context.Background(), "proj-one"); l.Complete || !strings.Contains(l.Problem, "us-east1-c") {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		f, c := setup(t)
		f.Deny("proj-one")
		if l := c.Discover(context.Background(), "proj-one"); l.Complete || !strings.Contains(l.Problem, "roles/container.clusterViewer") {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("throttled, retried", func(t *testing.T) {
		f, c := setup(t)
		f.Add(gkefake.Cluster{Project: "proj-one", Location: "us-east1", Name: "a"})
		f.ThrottleNext(2)
		if l := c.Discover(context.Background(), "proj-one"); !l.Complete || len(l.Clusters) != 1 || l.Calls != 3 {
			t.Fatalf("%+v", l)
		}
	})
}

func TestTokenFromServiceAccountKey(t *testing.T) {
	f, _ := setup(t)
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, f.ServiceAccountKey("reclaim@proj-one.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := gke.TokenSource(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if email, err := f.Verify(tok.AccessToken); err != nil || email != "reclaim@proj-one.iam.gserviceaccount.com" {
		t.Fatalf("Verify = %q, %v", email, err)
	}
	again, _ := ts.Token()
	if again.AccessToken != tok.AccessToken || f.Calls(gkefake.OpToken) != 1 {
		t.Error("the token is not reused until it expires")
	}
	f.SetClock(func() time.Time { return time.Now().Add(2 * time.Hour) }, time.Hour)
	if _, err := f.Verify(tok.AccessToken); err == nil {
		t.Fatal("an expired token was accepted")
	}
	if _, err := f.Verify("ya29.forged"); err == nil {
		t.Fatal("a forged token was accepted")
	}
	// A key the issuer never made is refused, and the error shows no token.
	other := gkefake.New()
	other.Start()
	defer other.Close()
	forged := strings.Replace(string(other.ServiceAccountKey("reclaim@proj-one.iam.gserviceaccount.com")), other.URL(), f.URL(), -1)
	fk := filepath.Join(t.TempDir(), "forged.json")
	_ = os.WriteFile(fk, []byte(forged), 0o600)
	fts, err := gke.TokenSource(context.Background(), fk)
	if err != nil {
		t.Fatal(err)
	}
	if tk, err := fts.Token(); err == nil || !strings.Contains(err.Error(), "Invalid JWT Signature") || strings.Contains(err.Error(), "ya29.") {
		t.Fatalf("forged key: %v (token %v; calls %d)", err, tk, f.Calls(gkefake.OpToken))
	}
}
