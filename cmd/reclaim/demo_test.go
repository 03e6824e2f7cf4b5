//go:build demo

package main

import (
	"encoding/json"
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
