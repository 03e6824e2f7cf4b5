package config_test

import (
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
)

const recordsOK = `clusters:
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
  records:
    bucket: acme-reclaim
    prefix: fleet
    account: "123456789012"
    region: us-east-1
`

// A deleter reading records: two clusters with no kubeconfig are two
// clusters (found by place), and the defaults apply.
func TestRecordsDefaults(t *testing.T) {
	cfg, err := config.Parse([]byte(recordsOK), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Fleet.Records
	if s == nil || s.MaxAge.Std() != 3*time.Hour || s.MaxDrop.Fraction() != 0.5 || s.DropSettle.Std() != 24*time.Hour {
		t.Fatalf("records %+v", s)
	}
	if s.Heartbeat.Std() != 5*time.Minute || s.DeleteMaxAge.Std() != 12*time.Minute {
		t.Errorf("heartbeat %s, deleteMaxAge %s: want 5m and 12m (two heartbeats and slack)", s.Heartbeat, s.DeleteMaxAge)
	}
	// The delete bound follows the heartbeat the file sets.
	cfg, err = config.Parse([]byte(recordsOK+"    heartbeat: 10m\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Fleet.Records.DeleteMaxAge.Std(); got != 22*time.Minute {
		t.Errorf("heartbeat 10m: deleteMaxAge %s, want 22m", got)
	}
}

func TestRecordsProblems(t *testing.T) {
	section := func(body string) string {
		return "clusters:\n  - name: a\n    platform: eks\n    account: \"123456789012\"\n    location: us-east-1\nfleet:\n  records:\n" + body
	}
	good := "    bucket: b\n    account: \"123456789012\"\n    region: us-east-1\n"
	configtest.Run(t, []configtest.Case{
		{"no bucket", section("    account: \"123456789012\"\n    region: us-east-1\n"), "fleet.records.bucket", "is required"},
		{"bad owner", section("    bucket: b\n    account: \"1234\"\n    region: us-east-1\n"), "fleet.records.account", "not an AWS account id"},
		{"slash prefix", section(good + "    prefix: /fleet/\n"), "fleet.records.prefix", "without a leading or trailing slash"},
		{"zero age", section(good + "    maxAge: 0s\n"), "fleet.records.maxAge", "more than 0"},
		{"zero delete age", section(good + "    deleteMaxAge: 0s\n"), "fleet.records.deleteMaxAge", "more than 0 — e.g. 12m"},
		{"delete age over maxAge", section(good + "    maxAge: 1h\n    deleteMaxAge: 2h\n"), "fleet.records.deleteMaxAge", "more than fleet.records.maxAge 1h"},
		{"delete age within a heartbeat", section(good + "    heartbeat: 10m\n    deleteMaxAge: 10m\n"), "fleet.records.deleteMaxAge", "use at least 22m"},
		{"zero heartbeat", section(good + "    heartbeat: 0s\n"), "fleet.records.heartbeat", "more than 0"},
		{"drop over 100%", section(good + "    maxDrop: 150%\n"), "fleet.records.maxDrop", "more than 100%"},
		{"no drop", section(good + "    maxDrop: 0%\n"), "fleet.records.maxDrop", "out of range"},
		{"pin of no cluster", section(good + "    kubeSystemUIDs: {zz: x}\n"), "fleet.records.kubeSystemUIDs.zz", "names no cluster"},
		{"CA pin of no cluster", section(good + "    caSHA256s: {zz: " + strings.Repeat("ab", 32) + "}\n"), "fleet.records.caSHA256s.zz", "names no cluster"},
		{"CA pin not a hash", section(good + "    caSHA256s: {a: abc}\n"), "fleet.records.caSHA256s.a", "not a SHA-256"},
		{"no place", "clusters:\n  - name: a\nfleet:\n  records:\n" + good, "clusters[0]", "say where the cluster lives"},
		{"one identity twice", "clusters:\n  - name: a\n    platform: gke\n    project: acme-prod\n    location: us-east1-b\n    cloudName: prod\n" +
			"  - name: b\n    platform: gke\n    project: acme-prod\n    location: us-east1-b\n    cloudName: prod\nfleet:\n  records:\n" + good, "clusters[1]", "both would read one record"},
		// GCS: its bucket, and none of S3's fields beside it.
		{"GCS without a bucket", section("    gcs: {}\n"), "fleet.records.gcs.bucket", "is required"},
		{"GCS bucket with a path", section("    gcs: {bucket: gs://b/fleet}\n"), "fleet.records.gcs.bucket", "the bucket's name alone"},
		{"GCS with an S3 bucket", section("    gcs: {bucket: b}\n    bucket: b\n"), "fleet.records.bucket", "is S3's"},
		{"GCS with an S3 account", section("    gcs: {bucket: b}\n    account: \"123456789012\"\n"), "fleet.records.account", "is S3's"},
		{"GCS with an S3 role", section("    gcs: {bucket: b}\n    roleARN: arn:aws:iam::123456789012:role/r\n"), "fleet.records.roleARN", "is S3's"},
		{"GCS with an S3 endpoint", section("    gcs: {bucket: b}\n    endpoint: http://localhost:9000\n"), "fleet.records.endpoint", "is S3's"},
		{"GCS bad endpoint", section("    gcs: {bucket: b, endpoint: storage.example}\n"), "fleet.records.gcs.endpoint", "not an absolute"},
		// The client lists and reads at ENDPOINT + "b/BUCKET/o": without the
		// API's path every read goes elsewhere and reads as denied.
		{"GCS endpoint without its API path", section("    gcs: {bucket: b, endpoint: \"http://localhost:4443\"}\n"), "fleet.records.gcs.endpoint",
			`"http://localhost:4443" has no API path: GCS's JSON API is under /storage/v1/, and without it every read goes to the wrong path and reads as denied or missing — write http://localhost:4443/storage/v1/`},
		{"GCS endpoint of a host and a slash", section("    gcs: {bucket: b, endpoint: \"https://storage-psc.p.googleapis.com/\"}\n"), "fleet.records.gcs.endpoint",
			"has no API path: GCS's JSON API is under /storage/v1/, and without it every read goes to the wrong path and reads as denied or missing — write https://storage-psc.p.googleapis.com/storage/v1/"},
		{"GCS endpoint without its trailing slash", section("    gcs: {bucket: b, endpoint: \"http://localhost:4443/storage/v1\"}\n"), "fleet.records.gcs.endpoint",
			"the API path needs its trailing slash (without it reads go to /storage/b/…) — write http://localhost:4443/storage/v1/"},
		{"GCS endpoint of another path", section("    gcs: {bucket: b, endpoint: \"https://proxy.example/gcs\"}\n"), "fleet.records.gcs.endpoint",
			"does not end with GCS's JSON API path /storage/v1/ — write the API's base URL with it, e.g. https://proxy.example/gcs/storage/v1/"},
	}, nil)
}

// A GCS bucket needs no AWS account or region: a GKE-only fleet's
// deleter names its bucket alone.
func TestRecordsInGCS(t *testing.T) {
	y := strings.Replace(recordsOK, "    bucket: acme-reclaim\n", "    gcs:\n      bucket: acme-reclaim\n", 1)
	y = strings.Replace(y, "    account: \"123456789012\"\n    region: us-east-1\n", "", 1)
	cfg, err := config.Parse([]byte(y), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Fleet.Records
	if s.GCS == nil || s.GCS.Bucket != "acme-reclaim" || s.Bucket != "" {
		t.Fatalf("records %+v", s)
	}
	if got := s.Where("fleet/x"); got != "gs://acme-reclaim/fleet/x" {
		t.Fatalf("Where: %s", got)
	}
	// An endpoint is the JSON API's base URL, its path included.
	for _, e := range []string{"https://storage-psc.p.googleapis.com/storage/v1/", "http://127.0.0.1:4443/storage/v1/"} {
		y := strings.Replace(y, "      bucket: acme-reclaim\n", "      bucket: acme-reclaim\n      endpoint: "+e+"\n", 1)
		if cfg, err := config.Parse([]byte(y), "t.yaml"); err != nil || cfg.Fleet.Records.GCS.Endpoint != e {
			t.Fatalf("endpoint %s: %v", e, err)
		}
	}
}

// A file that still says fleet.snapshots, the records' old name, loads as
// fleet.records with a warning naming the new key; its problems name the
// key the file wrote, and both keys at once is a problem.
func TestRecordsOldName(t *testing.T) {
	old := strings.Replace(recordsOK, "  records:\n", "  snapshots:\n", 1)
	cfg, err := config.Parse([]byte(old), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Fleet.Records; s == nil || s.Bucket != "acme-reclaim" || s.MaxAge.Std() != 3*time.Hour {
		t.Fatalf("records %+v", s)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "fleet.snapshots is now named fleet.records") {
		t.Fatalf("warnings %q, want one naming fleet.records", cfg.Warnings)
	}
	if cfg, _ := config.Parse([]byte(recordsOK), "t.yaml"); len(cfg.Warnings) != 0 {
		t.Fatalf("warnings of the new name: %q", cfg.Warnings)
	}
	section := func(key, body string) string {
		return "clusters:\n  - name: a\n    platform: eks\n    account: \"123456789012\"\n    location: us-east-1\nfleet:\n  " + key + ":\n" + body
	}
	good := "    bucket: b\n    account: \"123456789012\"\n    region: us-east-1\n"
	configtest.Run(t, []configtest.Case{
		{"old name, no bucket", section("snapshots", "    account: \"123456789012\"\n    region: us-east-1\n"), "fleet.snapshots.bucket", "is required"},
		{"old name, bad key", section("snapshots", good+"    maxAgee: 1h\n"), "fleet.snapshots.maxAgee", `did you mean "maxAge"`},
		{"both names", section("snapshots", good) + "  records:\n" + good, "fleet.snapshots", "old name of fleet.records, which the file sets too"},
	}, nil)
}
