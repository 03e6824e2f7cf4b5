package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// Kill-anywhere convergence on the real binary: --apply is SIGKILLed again
// and again, at a random delete or after a random delay (while it lists,
// plans, saves or deletes), and run once more each time. The fleet
// converges (every orphan gone), nothing in use is touched, and the audit
// log records each delete exactly once. RECLAIM_KILL_SEED reruns one seed.
func TestKillAnywhereConverges(t *testing.T) {
	kr := newKillRuns(t, "TestKillAnywhereConverges")
	w := newWorld(t, gcefake.Options{OnDelete: func(string) { kr.deleted() }, OpPolls: 1})
	const orphans = 40
	var keys []string
	for i := range orphans {
		keys = append(keys, w.orphan(zoneA, "o"+string(rune('a'+i/26))+string(rune('a'+i%26))))
	}
	// In use: each has a PV in prod-a, and the same age and detach time.
	var used []string
	for i := range 3 {
		k := w.orphan(zoneA, "used"+string(rune('a'+i)))
		w.pv(prodA, k)
		used = append(used, k)
	}
	w.seen(w.now.Add(-48*time.Hour), append(append([]string(nil), keys...), used...)...)
	w.disksYAML = "  maxDeletePercent: 100%\n  maxDeletesPerRun: 1000\n  breakerCandidates: 1000\n"
	// GCE finishes a delete operation whether or not anyone waits.
	kr.settle = w.gce.CompleteOperations
	kr.left = func() int { return len(w.gce.Disks(project)) - len(used) }
	kills := kr.runs(w.configPath(), w.auditPath(), 1500*time.Millisecond)
	for _, k := range used {
		if _, ok := w.gce.Disk(k); !ok {
			t.Fatalf("a disk in use was deleted: %s", k)
		}
	}
	for _, k := range keys {
		if _, ok := w.gce.Disk(k); ok {
			t.Fatalf("did not converge: %s is left", k)
		}
	}
	auditedOnce(t, w.audit(), keys, kills)
}

// The same on a heavy image trim: 3,000 images of one repository past
// their grace, trimmed to 30 in batches of 100 deleted 8 at once (at most
// 600 a run), the
// binary killed as a BatchDeleteImage call arrives, after a random delay,
// or right after an audit line. The trim converges, the images a pod runs
// survive, and each deleted image is audited exactly once.
func TestKillAnywhereConvergesOnAnImageTrim(t *testing.T) {
	kr := newKillRuns(t, "TestKillAnywhereConvergesOnAnImageTrim")
	w := newImageWorld(t, 3000, ecrfake.Options{Latency: 2 * time.Millisecond, OnRequest: func(op string) {
		if op == ecrfake.OpBatchDeleteImage {
			kr.deleted()
		}
	}})
	w.seen(w.now.Add(-2 * time.Hour))
	// At most 600 a run: at least five runs with deletes to kill.
	w.extraECRYAML = "  maxDeletesPerRun: 600\n"
	w.ecrYAML = "      limit: 3000\n      highWater: 1%\n      target: 1%\n      keepNewest: 5\n"
	name := strings.ReplaceAll(strings.TrimPrefix(w.repo, "e2e/"), "/", "-")
	used := []string{w.digest[0], w.digest[1500]}
	for i, d := range used {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: "default"}, Spec: podSpec(w.ref("@" + d))}
		create(t, prodA, pod, prodA.Client.CoreV1().Pods("default").Create, prodA.Client.CoreV1().Pods("default").Delete, pod.Name)
	}
	// The trim leaves its target, 30: the two in use and the newest 28.
	keep := map[string]bool{used[0]: true, used[1]: true}
	for _, d := range w.digest[len(w.digest)-28:] {
		keep[d] = true
	}
	var trimmed []string
	for _, d := range w.digest {
		if !keep[d] {
			trimmed = append(trimmed, ecrimage.ID(repoKey(w.repo), d))
		}
	}
	kr.left = func() int { return len(w.ecr.Images(account, w.repo)) - len(keep) }
	kr.spread = 5 // of the 6 BatchDeleteImage calls a run makes
	kills := kr.runs(w.configPath(), filepath.Join(w.dir, "audit.jsonl"), 300*time.Millisecond)
	for d := range keep {
		if !w.ecr.Has(account, w.repo, d) {
			t.Fatalf("an image the trim keeps was deleted: %s", d)
		}
	}
	if n := kr.left(); n != 0 {
		t.Fatalf("did not converge: %d images too many are left", n)
	}
	auditedOnce(t, readAudit(t, filepath.Join(w.dir, "audit.jsonl")), trimmed, kills)
}

// killRuns runs reclaim run --apply until what it deletes is gone, killing
// most runs somewhere (kill-anywhere convergence).
type killRuns struct {
	t               *testing.T
	rng             *rand.Rand
	proc            atomic.Pointer[os.Process]
	deletes, killAt atomic.Int32
	// settle runs after each run; left counts what is still to delete.
	settle func()
	left   func() int
	// spread: a run is killed within this many delete calls (fewer than a
	// run makes, or it may finish first).
	spread int
}

func newKillRuns(t *testing.T, name string) *killRuns {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RECLAIM_KILL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RECLAIM_KILL_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun: RECLAIM_KILL_SEED=%d go test -run %s ./e2e/)", seed, seed, name)
	return &killRuns{t: t, rng: rand.New(rand.NewPCG(seed, 0)), settle: func() {}, spread: 8}
}

// deleted is the fake's delete hook: it kills the run at the chosen delete.
func (k *killRuns) deleted() {
	if n := k.deletes.Add(1); n == k.killAt.Load() {
		if p := k.proc.Load(); p != nil {
			_ = p.Signal(syscall.SIGKILL)
		}
	}
}

// runs runs --apply with cfg until left() is 0 and one run finished
// unkilled, killing each run before that at a random delete, after a
// random delay under maxDelay, or after a random audit line. It returns
// how many runs were killed.
func (k *killRuns) runs(cfg, auditPath string, maxDelay time.Duration) int {
	t := k.t
	kills := 0
	for run := 0; ; run++ {
		if run == 30 {
			t.Fatalf("not converged after %d runs: %d left", run, k.left())
		}
		last := k.left() == 0 || run >= 25 // the last runs go unkilled
		k.killAt.Store(0)
		var delay time.Duration
		afterLine := 0 // kill once the audit log has this many lines
		if !last {
			switch k.rng.IntN(3) {
			case 0: // as a delete arrives, before reclaim hears of it
				k.killAt.Store(k.deletes.Load() + 1 + int32(k.rng.IntN(k.spread)))
			case 1: // anywhere: listing, planning, saving, deleting
				delay = time.Duration(k.rng.Int64N(int64(maxDelay)))
			case 2: // right after an audit line, before the state records it
				afterLine = auditLines(auditPath) + 1 + k.rng.IntN(4)
			}
		}
		c := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--apply", "--config", cfg)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		k.proc.Store(c.Process)
		var timer *time.Timer
		if delay > 0 {
			timer = time.AfterFunc(delay, func() { _ = c.Process.Signal(syscall.SIGKILL) })
		}
		stop := make(chan struct{})
		if afterLine > 0 {
			go func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if auditLines(auditPath) >= afterLine {
						_ = c.Process.Signal(syscall.SIGKILL)
						return
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
		}
		err := c.Wait()
		if timer != nil {
			timer.Stop()
		}
		close(stop)
		k.proc.Store(nil)
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		k.settle()
		switch {
		case killed:
			kills++
		case err != nil && ee == nil:
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		case last:
			if err != nil {
				t.Fatalf("last run: %v\n%s", err, out.String())
			}
		}
		t.Logf("run %d: killed %v (at delete %d, after %s, at audit line %d), %d left: %s", run, killed, k.killAt.Load(), delay, afterLine, k.left(), lastLine(out.String()))
		if last && !killed && k.left() == 0 {
			break
		}
	}
	if kills < 3 {
		t.Fatalf("only %d runs were killed: the test did not exercise kills", kills)
	}
	t.Logf("%d runs killed before convergence", kills)
	return kills
}

// auditedOnce fails unless the audit log records each of ids deleted once.
func auditedOnce(t *testing.T, records []audit.Record, ids []string, kills int) {
	t.Helper()
	count := map[string]int{}
	for _, r := range records {
		if r.Done() {
			count[r.ID]++
		}
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Fatalf("audit records the delete of %s %d times (%d runs killed)", id, count[id], kills)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// auditLines counts the lines of the audit log at path.
func auditLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}
