package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestNotifyDeliveries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newTestMetrics(reg)
	m.NotifyTargets([]string{"ops", "team-a"}, []string{"sent", "skipped", "failed"})
	m.ObserveDelivery("ops", "failed")
	m.ObserveDelivery("team-a", "sent")
	m.ObserveDelivery("team-a", "sent")
	want := `
# HELP reclaim_notify_deliveries_total Reports delivered to notify targets, by target (its configured name) and result (sent, skipped: nothing to send under its when policy, failed).
# TYPE reclaim_notify_deliveries_total counter
reclaim_notify_deliveries_total{result="failed",target="ops"} 1
reclaim_notify_deliveries_total{result="failed",target="team-a"} 0
reclaim_notify_deliveries_total{result="sent",target="ops"} 0
reclaim_notify_deliveries_total{result="sent",target="team-a"} 2
reclaim_notify_deliveries_total{result="skipped",target="ops"} 0
reclaim_notify_deliveries_total{result="skipped",target="team-a"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "reclaim_notify_deliveries_total"); err != nil {
		t.Fatal(err)
	}
}
