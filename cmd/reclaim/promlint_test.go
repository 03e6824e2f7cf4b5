//go:build demo

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/notify/metrics"
)

// The exposition of a run over the demo fleet (every kind's gauges with
// series) passes client_golang's promlint: base units, _total counters,
// help texts.
func TestMetricsPassPromlint(t *testing.T) {
	now := goldenNow
	rep, err := goldenDemo()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	m := metrics.NewMetrics(reg, app.KindNames(), app.Gauges())
	m.NotifyTargets([]string{"ops"}, []string{"sent"})
	m.Observe(rep, time.Second, now)
	reg.MustRegister(metrics.BuildInfo("v1.0.0", "abc"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) < 30 {
		t.Fatalf("%d metric families gathered: the demo run did not fill them", len(mfs))
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}

	// Every metric the shipped alert rules name is one reclaim exports (the
	// daemon's own are registered by the daemon): a renamed metric would
	// otherwise silence its alert.
	exported := map[string]bool{"reclaim_daemon_leader": true}
	for _, mf := range mfs {
		exported[mf.GetName()] = true
	}
	rules, err := os.ReadFile(filepath.Join("..", "..", "deploy", "alerts", "reclaim.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`reclaim_[a-z_]+`).FindAllString(string(rules), -1) {
		if strings.HasSuffix(name, "_") || strings.HasPrefix(name, "reclaim_rules") {
			continue
		}
		if !exported[name] {
			t.Errorf("the alert rules name %s, which reclaim does not export", name)
		}
	}
}
