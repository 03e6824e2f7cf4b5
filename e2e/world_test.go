package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

const (
	project = "e2e-project"
	zoneA   = "asia-northeast1-a"
	zoneB   = "asia-northeast1-b"
)

// world is one test's fleet: a fresh GCE fake, the two shared clusters, and a
// directory holding the config, state file and audit log.
type world struct {
	t      *testing.T
	dir    string
	gce    *gcefake.Server
	now    time.Time
	prefix string
	// prodB overrides how prod-b is reached: kubeconfig path and context.
	prodBKubeconfig, prodBContext string
	disksYAML                     string
	// fleetYAML is the fleet section's body; "" turns discovery off.
	fleetYAML string
}

var (
	unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)
	worlds      atomic.Int32
)

func newWorld(t *testing.T, opts ...gcefake.Options) *world {
	t.Helper()
	o := gcefake.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	w := &world{t: t, dir: t.TempDir(), gce: gcefake.New(o), now: time.Now().UTC().Truncate(time.Second),
		prodBKubeconfig: prodB.Kubeconfig, prodBContext: "admin"}
	w.prefix = strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(w.prefix) > 30 {
		w.prefix = w.prefix[len(w.prefix)-30:]
	}
	// A run number keeps names unique when tests repeat (-count) on the same clusters.
	w.prefix = fmt.Sprintf("%s-%d", strings.Trim(w.prefix, "-"), worlds.Add(1))
	t.Cleanup(w.gce.Close)
	w.gce.SetQuota(project, "asia-northeast1", "SSD_TOTAL_GB", 1500, 1400)
	return w
}

func (w *world) name(s string) string { return w.prefix + "-" + s }

// orphan seeds a disk that Kubernetes made, 60 days old, detached 30 days ago.
func (w *world) orphan(zone, name string) string {
	return w.gce.AddDisk(project, gcefake.Disk{Zone: zone, Name: w.name(name), SizeGB: 20, Type: "pd-balanced",
		Labels:      map[string]string{"goog-gke-volume": ""},
		Description: `{"kubernetes.io/created-for/pv/name":"x","kubernetes.io/created-for/pvc/name":"y","kubernetes.io/created-for/pvc/namespace":"z"}`,
		Created:     w.now.Add(-60 * 24 * time.Hour), LastDetach: w.now.Add(-30 * 24 * time.Hour)})
}

// pv creates a PersistentVolume in c whose CSI handle names key.
func (w *world) pv(c *testenv.Cluster, key string) string {
	w.t.Helper()
	name := "pv-" + w.name(fmt.Sprint(time.Now().UnixNano()%100000))
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "pd.csi.storage.gke.io", VolumeHandle: key}},
		},
	}
	ctx := context.Background()
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("create pv in %s: %v", c.Name, err)
	}
	w.t.Cleanup(func() {
		_ = c.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// seen writes a state file in which every disk key has been an orphan since
// t (each clock carries the disk's numeric id, as the planner's do).
func (w *world) seen(t time.Time, keys ...string) {
	w.t.Helper()
	writeSeen(w.t, w.statePath(), t, func(key string) string { d, _ := w.gce.Disk(key); return d.ID }, keys...)
}

// writeSeen writes a state file at path in which every id has been an
// orphan since since, as the object identity(id) names ("" for none).
func writeSeen(t *testing.T, path string, since time.Time, identity func(id string) string, ids ...string) {
	t.Helper()
	st := engine.NewState()
	for _, id := range ids {
		st.Seen(id, identity(id), since)
	}
	if err := (&state.FileStore{Path: path}).Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
}

func (w *world) statePath() string { return filepath.Join(w.dir, "state.json") }
func (w *world) auditPath() string { return filepath.Join(w.dir, "audit.jsonl") }

// configPath writes the run's YAML config, the way a user would.
func (w *world) configPath() string {
	w.t.Helper()
	disks := w.disksYAML
	if disks == "" {
		disks = "  maxDeletePercent: 100%\n"
	}
	fleet := w.fleetYAML
	if fleet == "" {
		fleet = "  discover: false\n"
	}
	y := fmt.Sprintf(`clusters:
  - name: prod-a
    kubeconfig: %s
    context: admin
    timeout: 30s
  - name: prod-b
    kubeconfig: %s
    context: %s
    timeout: 10s
gce:
  projects: [%s]
  endpoint: %s
  withoutAuthentication: true
fleet:
%sdisks:
  minAge: 24h
  grace: 6h
  minDetached: 1h
%sstate:
  file: %s
audit:
  file: %s
`, prodA.Kubeconfig, w.prodBKubeconfig, w.prodBContext, project, w.gce.URL(), fleet, disks, w.statePath(), w.auditPath())
	p := filepath.Join(w.dir, "reclaim.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// run does one reclaim run at w.now, through config.Load and app.Run.
func (w *world) run(apply bool) *report.Report {
	w.t.Helper()
	return runConfig(w.t, w.configPath(), w.now, apply)
}

// runConfig loads the config file at path and runs reclaim once at now.
func runConfig(t *testing.T, path string, now time.Time, apply bool) *report.Report {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := app.Run(ctx, cfg, app.Deps{Now: func() time.Time { return now }}, app.Options{Apply: apply})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

func (w *world) audit() []audit.Record {
	w.t.Helper()
	return readAudit(w.t, w.auditPath())
}

// readAudit reads the audit log at path (none: no records).
func readAudit(t *testing.T, path string) []audit.Record {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if !bytes.HasSuffix(sc.Bytes(), []byte("}")) {
				continue // torn by a kill in mid-write; the next run ended it
			}
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func decision(t *testing.T, rep *report.Report, id string) engine.Decision {
	t.Helper()
	for _, d := range rep.Plan.Decisions {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no decision for %s", id)
	return engine.Decision{}
}

func text(rep *report.Report) string {
	var b strings.Builder
	_ = rep.Text(&b, report.TextOptions{MaxKept: -1})
	return b.String()
}

func gcefakeDisk(w *world, name string) gcefake.Disk {
	return gcefake.Disk{Zone: zoneA, Name: w.name(name), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: w.now.Add(-60 * 24 * time.Hour)}
}
