package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/internal/demo"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

// The streamed JSON is byte for byte what encoding/json's indenting
// encoder makes of the whole report.
func TestJSONStreamsWhatTheEncoderWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes the demo's whole report twice: sequential, and minutes under the race detector")
	}
	rep, err := demo.RunAt(context.Background(), io.Discard, zap.NewNop(), time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	applied := *rep
	applied.Mode, applied.LastSuccess = "apply", time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	applied.Outcome = &engine.Outcome{Deleted: 1, Results: []engine.Result{{Kind: "k", ID: "a<b>&c", Result: audit.Deleted}}}
	empty := report.New(&engine.Plan{Decisions: []engine.Decision{}, State: engine.NewState()}, nil, false)
	cases := map[string]*report.Report{
		"demo":           rep,
		"applied":        &applied,
		"empty plan":     empty,
		"nil decisions":  report.New(&engine.Plan{State: engine.NewState()}, nil, false),
		"no plan at all": {Version: "v1", Mode: "dry-run"},
	}
	for name, r := range cases {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := r.JSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s: streamed JSON differs at byte %d:\n got %q\nwant %q", name, i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
	if len(rep.Plan.Decisions) < 1000 {
		t.Fatalf("the demo plan has %d decisions: too few to stream", len(rep.Plan.Decisions))
	}
}
