//go:build demo

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoJSONIsVersioned(t *testing.T) {
	out, _, err := execute("demo", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version  string `json:"version"`
		Mode     string `json:"mode"`
		ExitCode int    `json:"exitCode"`
		Plan     struct {
			Decisions []struct {
				Kind, ID, Action, Reason string
			} `json:"decisions"`
			Headroom []map[string]any `json:"headroom"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// Exit 3: the demo fleet has a cluster the config misses, which holds
	// the interface in the subnet it shares.
	if doc.Version != "reclaim.dev/v1" || doc.Mode != "dry-run" || doc.ExitCode != 3 || len(doc.Plan.Decisions) == 0 || len(doc.Plan.Headroom) == 0 {
		t.Fatalf("version %s, mode %s, exit %d, %d decisions, %d headroom rows", doc.Version, doc.Mode, doc.ExitCode, len(doc.Plan.Decisions), len(doc.Plan.Headroom))
	}
	for _, d := range doc.Plan.Decisions {
		if d.Reason == "" || d.Action == "" || d.ID == "" {
			t.Fatalf("decision without id, action or reason: %+v", d)
		}
	}
}

func TestUnknownOutputFormat(t *testing.T) {
	if _, _, err := execute("demo", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "use text or json") {
		t.Fatal(err)
	}
}

// reclaim demo --metrics-textfile writes the run's metrics as reclaim run
// does, and Prometheus's own checker (Debian's promtool, installed by
// make testdeps) accepts them.
func TestDemoMetricsTextfilePassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("no promtool: run make testdeps (Debian's prometheus package)")
	}
	f := filepath.Join(t.TempDir(), "reclaim.prom")
	if _, _, err := execute("demo", "--metrics-textfile", f); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reclaim_run_duration_seconds", "reclaim_gce_quota_used_ratio", "reclaim_subnet_ips", `kind="gce-disk"`, `reclaim_cloud_api_attempts_total{operation="DescribeNetworkInterfaces",service="EC2"}`, `reclaim_source_read_timestamp_seconds{kind="cluster",name="prod-a"}`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("the demo's metrics lack %s:\n%.2000s", want, body)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
