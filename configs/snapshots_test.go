package config_test

import (
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
)

const snapshotsOK = `clusters:
  - name: a
    platform: eks
    account: "123456789012"
    location: us-east-1
  - name: b
    platform: gke
    project: acme-prod
    location: us-central1
fleet:
  discover: false
  snapshots:
    bucket: acme-reclaim
    prefix: fleet
    account: "123456789012"
    region: us-east-1
`

// A deleter reading records: two clusters with no kubeconfig are two
// clusters (found by place), and the defaults apply.
func TestSnapshotsDefaults(t *testing.T) {
	cfg, err := config.Parse([]byte(snapshotsOK), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Fleet.Snapshots
	if s == nil || s.MaxAge.Std() != 3*time.Hour || s.MaxDrop.Fraction() != 0.5 || s.DropSettle.Std() != 24*time.Hour {
		t.Fatalf("snapshots %+v", s)
	}
	if s.Heartbeat.Std() != 5*time.Minute || s.DeleteMaxAge.Std() != 12*time.Minute {
		t.Errorf("heartbeat %s, deleteMaxAge %s: want 5m and 12m (two heartbeats and slack)", s.Heartbeat, s.DeleteMaxAge)
	}
	// The delete bound follows the heartbeat the file sets.
	cfg, err = config.Parse([]byte(snapshotsOK+"    heartbeat: 10m\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Fleet.Snapshots.DeleteMaxAge.Std(); got != 22*time.Minute {
		t.Errorf("heartbeat 10m: deleteMaxAge %s, want 22m", got)
	}
}

func TestSnapshotsProblems(t *testing.T) {
	section := func(body string) string {
		return "clusters:\n  - name: a\n    platform: eks\n    account: \"123456789012\"\n    location: us-east-1\nfleet:\n  snapshots:\n" + body
	}
	good := "    bucket: b\n    account: \"123456789012\"\n    region: us-east-1\n"
	configtest.Run(t, []configtest.Case{
		{"no bucket", section("    account: \"123456789012\"\n    region: us-east-1\n"), "fleet.snapshots.bucket", "is required"},
		{"bad owner", section("    bucket: b\n    account: \"1234\"\n    region: us-east-1\n"), "fleet.snapshots.account", "not an AWS account id"},
		{"slash prefix", section(good + "    prefix: /fleet/\n"), "fleet.snapshots.prefix", "without a leading or trailing slash"},
		{"zero age", section(good + "    maxAge: 0s\n"), "fleet.snapshots.maxAge", "more than 0"},
		{"zero delete age", section(good + "    deleteMaxAge: 0s\n"), "fleet.snapshots.deleteMaxAge", "more than 0 — e.g. 12m"},
		{"delete age over maxAge", section(good + "    maxAge: 1h\n    deleteMaxAge: 2h\n"), "fleet.snapshots.deleteMaxAge", "more than fleet.snapshots.maxAge 1h"},
		{"delete age within a heartbeat", section(good + "    heartbeat: 10m\n    deleteMaxAge: 10m\n"), "fleet.snapshots.deleteMaxAge", "use at least 22m"},
		{"zero heartbeat", section(good + "    heartbeat: 0s\n"), "fleet.snapshots.heartbeat", "more than 0"},
		{"drop over 100%", section(good + "    maxDrop: 150%\n"), "fleet.snapshots.maxDrop", "more than 100%"},
		{"no drop", section(good + "    maxDrop: 0%\n"), "fleet.snapshots.maxDrop", "out of range"},
		{"pin of no cluster", section(good + "    kubeSystemUIDs: {zz: x}\n"), "fleet.snapshots.kubeSystemUIDs.zz", "names no cluster"},
		{"CA pin of no cluster", section(good + "    caSHA256s: {zz: " + strings.Repeat("ab", 32) + "}\n"), "fleet.snapshots.caSHA256s.zz", "names no cluster"},
		{"CA pin not a hash", section(good + "    caSHA256s: {a: abc}\n"), "fleet.snapshots.caSHA256s.a", "not a SHA-256"},
		{"no place", "clusters:\n  - name: a\nfleet:\n  snapshots:\n" + good, "clusters[0]", "say where the cluster lives"},
		{"one identity twice", "clusters:\n  - name: a\n    platform: gke\n    project: acme-prod\n    location: us-east1-b\n    cloudName: prod\n" +
			"  - name: b\n    platform: gke\n    project: acme-prod\n    location: us-east1-b\n    cloudName: prod\nfleet:\n  snapshots:\n" + good, "clusters[1]", "both would read one record"},
		// GCS: its bucket, and none of S3's fields beside it.
		{"GCS without a bucket", section("    gcs: {}\n"), "fleet.snapshots.gcs.bucket", "is required"},
		{"GCS bucket with a path", section("    gcs: {bucket: gs://b/fleet}\n"), "fleet.snapshots.gcs.bucket", "the bucket's name alone"},
		{"GCS with an S3 bucket", section("    gcs: {bucket: b}\n    bucket: b\n"), "fleet.snapshots.bucket", "is S3's"},
		{"GCS with an S3 account", section("    gcs: {bucket: b}\n    account: \"123456789012\"\n"), "fleet.snapshots.account", "is S3's"},
		{"GCS with an S3 role", section("    gcs: {bucket: b}\n    roleARN: arn:aws:iam::123456789012:role/r\n"), "fleet.snapshots.roleARN", "is S3's"},
		{"GCS with an S3 endpoint", section("    gcs: {bucket: b}\n    endpoint: http://localhost:9000\n"), "fleet.snapshots.endpoint", "is S3's"},
		{"GCS bad endpoint", section("    gcs: {bucket: b, endpoint: storage.example}\n"), "fleet.snapshots.gcs.endpoint", "not an absolute"},
		// The client lists and reads at ENDPOINT + "b/BUCKET/o": without the
		// API's path every read goes elsewhere and reads as denied.
		{"GCS endpoint without its API path", section("    gcs: {bucket: b, endpoint: \"http://localhost:4443\"}\n"), "fleet.snapshots.gcs.endpoint",
			`"http://localhost:4443" has no API path: GCS's JSON API is under /storage/v1/, and without it every read goes to the wrong path and reads as denied or missing — write http://localhost:4443/storage/v1/`},
		{"GCS endpoint of a host and a slash", section("    gcs: {bucket: b, endpoint: \"https://storage-psc.p.googleapis.com/\"}\n"), "fleet.snapshots.gcs.endpoint",
			"has no API path: GCS's JSON API is under /storage/v1/, and without it every read goes to the wrong path and reads as denied or missing — write https://storage-psc.p.googleapis.com/storage/v1/"},
		{"GCS endpoint without its trailing slash", section("    gcs: {bucket: b, endpoint: \"http://localhost:4443/storage/v1\"}\n"), "fleet.snapshots.gcs.endpoint",
			"the API path needs its trailing slash (without it reads go to /storage/b/…) — write http://localhost:4443/storage/v1/"},
		{"GCS endpoint of another path", section("    gcs: {bucket: b, endpoint: \"https://proxy.example/gcs\"}\n"), "fleet.snapshots.gcs.endpoint",
			"does not end with GCS's JSON API path /storage/v1/ — write the API's base URL with it, e.g. https://proxy.example/gcs/storage/v1/"},
	}, nil)
}

// A GCS bucket needs no AWS account or region: a GKE-only fleet's
// deleter names its bucket alone.
func TestSnapshotsInGCS(t *testing.T) {
	y := strings.Replace(snapshotsOK, "    bucket: acme-reclaim\n", "    gcs:\n      bucket: acme-reclaim\n", 1)
	y = strings.Replace(y, "    account: \"123456789012\"\n    region: us-east-1\n", "", 1)
	cfg, err := config.Parse([]byte(y), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Fleet.Snapshots
	if s.GCS == nil || s.GCS.Bucket != "acme-reclaim" || s.Bucket != "" {
		t.Fatalf("snapshots %+v", s)
	}
	if got := s.Where("fleet/x"); got != "gs://acme-reclaim/fleet/x" {
		t.Fatalf("Where: %s", got)
	}
	// An endpoint is the JSON API's base URL, its path included.
	for _, e := range []string{"https://storage-psc.p.googleapis.com/storage/v1/", "http://127.0.0.1:4443/storage/v1/"} {
		y := strings.Replace(y, "      bucket: acme-reclaim\n", "      bucket: acme-reclaim\n      endpoint: "+e+"\n", 1)
		if cfg, err := config.Parse([]byte(y), "t.yaml"); err != nil || cfg.Fleet.Snapshots.GCS.Endpoint != e {
			t.Fatalf("endpoint %s: %v", e, err)
		}
	}
}
