package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
)

// dashboard is the part of a Grafana dashboard this test reads.
type dashboard struct {
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// The Grafana dashboard deploy/ ships, against the real thing: Debian's
// Prometheus scrapes a running reclaim daemon (the binary, as its pod runs
// it) over the agents' world with EBS added, and every panel's first query
// returns series (the others are reported: a projection has none while
// nothing grows). The chart's copy is the same dashboard, and every metric
// it names is one the daemon exports.
func TestDashboardPanelsHaveSeries(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("no prometheus: make testdeps installs Debian's prometheus package")
	}
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "dashboards", "reclaim.json"))
	if err != nil {
		t.Fatal(err)
	}
	chart, err := os.ReadFile(filepath.Join("..", "deploy", "helm", "reclaim", "files", "reclaim-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, chart) {
		t.Error("deploy/dashboards/reclaim.json and the chart's files/reclaim-dashboard.json differ")
	}
	var dash dashboard
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}

	w := newAgentWorld(t)
	w.gkeDisk(zoneA, "orphan")
	w.gce.SetQuota(project, inventory.RegionOfZone(zoneA), "SSD_TOTAL_GB", 1500, 1200)
	vols := ebsfake.New(ebsfake.Options{Region: ec2Region, Account: account})
	vols.Start()
	t.Cleanup(vols.Close)
	vols.SetQuota(account, "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 1, "None")
	vols.AddVolume(account, ebsfake.Volume{SizeGiB: 100, Type: "gp3", Created: w.now.Add(-30 * day), Tags: map[string]string{"team": "x"}})
	// A pod made now holds an address of prod-a's subnet: the subnet's
	// consumption rate, and so its projection, are known.
	held := w.ec2.AddInterface(ec2fake.Interface{Subnet: w.subA, Description: "aws-K8S-i-0123456789abcdef0",
		Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0123456789abcdef0", "cluster.k8s.amazonaws.com/name": "prod-a"}})
	iface, _ := w.ec2.Interface(held)
	w.pod(prodA, "holder", nil, corev1.PodRunning, 0, iface.IPs[0])
	w.agents()
	cfg, err := os.ReadFile(w.deleterConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, fmt.Sprintf(`ebs:
  endpoint: %s
  quotasEndpoint: %s
  regions:
    - account: "%s"
      region: %s
  grace: 6h
prices:
  currency: USD
daemon:
  schedule: "@every 3s"
`, vols.URL(), vols.URL(), account, ec2Region)...)
	cfgPath := filepath.Join(w.dir, "daemon.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := freeAddr(t)
	daemon := reclaimCmd(ctx, t, testenv.Daemon, nil, "daemon", "--config", cfgPath, "--listen", addr)
	var daemonOut bytes.Buffer
	daemon.Stdout, daemon.Stderr = &daemonOut, &daemonOut
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = daemon.Wait() }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the daemon's output:\n%s", daemonOut.String())
		}
	})
	waitUntil(t, "the daemon's first pass", func() bool { return httpOK("http://" + addr + "/readyz") })

	dir := t.TempDir()
	promAddr := freeAddr(t)
	promCfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: reclaim\n    static_configs:\n      - targets: ['%s']\n", addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	var promOut bytes.Buffer
	p := exec.CommandContext(ctx, prom, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	p.Stdout, p.Stderr = &promOut, &promOut
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = p.Wait() }()
	query := func(expr string) (int, error) { return promQuery("http://"+promAddr, expr) }
	// A few scrapes, and a second pass, so rates and increases have two
	// samples.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus's output:\n%s", promOut.String())
		}
	})
	waitUntil(t, "five scrapes of the daemon", func() bool {
		n, err := query(`count_over_time(up{job="reclaim"}[1m]) >= 5`)
		return err == nil && n == 1
	})

	// What the daemon exports: its series, and the gauges the kinds
	// declare (no series until known: a projection while nothing grows).
	exported := map[string]bool{}
	for _, g := range app.Gauges() {
		exported[g.Name] = true
	}
	metrics, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	for _, m := range regexp.MustCompile(`(?m)^(reclaim_[a-z_]+)`).FindAllStringSubmatch(string(body), -1) {
		exported[m[1]] = true
	}
	name := regexp.MustCompile(`reclaim_[a-z_]+`)
	panels := 0
	for _, pn := range dash.Panels {
		if pn.Type == "row" {
			continue
		}
		panels++
		if len(pn.Targets) == 0 {
			t.Errorf("panel %q has no query", pn.Title)
		}
		for _, tg := range pn.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				if !exported[m] {
					t.Errorf("panel %q, query %s: %s is not a metric the daemon exports", pn.Title, tg.RefID, m)
				}
			}
			expr := strings.ReplaceAll(tg.Expr, "$__rate_interval", "30s")
			n, err := query(expr)
			switch {
			case err != nil:
				t.Errorf("panel %q, query %s (%s): %v", pn.Title, tg.RefID, expr, err)
			case n == 0 && tg.RefID == "A":
				t.Errorf("panel %q: its first query returns no series: %s", pn.Title, expr)
			default:
				t.Logf("panel %q, query %s: %d series", pn.Title, tg.RefID, n)
			}
		}
	}
	if panels < 15 {
		t.Fatalf("%d panels: the dashboard was not read", panels)
	}
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpOK(u string) bool {
	resp, err := http.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// promQuery runs an instant query and counts the series it returns.
func promQuery(base, expr string) (int, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	return len(r.Data.Result), nil
}
