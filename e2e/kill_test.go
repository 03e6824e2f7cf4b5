package e2e

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"reclaim.dev/reclaim/providers/gce/gcefake"
)

// Kill-anywhere convergence on the real binary: --apply is SIGKILLed again
// and again, at a random delete or after a random delay (while it lists,
// plans, saves or deletes), and run once more each time. The fleet
// converges (every orphan gone), nothing in use is touched, and the audit
// log records each delete exactly once. RECLAIM_KILL_SEED reruns one seed.
func TestKillAnywhereConverges(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RECLAIM_KILL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RECLAIM_KILL_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun: RECLAIM_KILL_SEED=%d go test -run TestKillAnywhereConverges ./e2e/)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	var proc atomic.Pointer[os.Process]
	var deletes, killAt atomic.Int32
	w := newWorld(t, gcefake.Options{OnDelete: func(string) {
		if n := deletes.Add(1); n == killAt.Load() {
			if p := proc.Load(); p != nil {
				_ = p.Signal(syscall.SIGKILL)
			}
		}
	}, OpPolls: 1})
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
	cfg := w.configPath()

	kills := 0
	for run := 0; ; run++ {
		if run == 30 {
			t.Fatalf("not converged after %d runs: %d disks left", run, len(w.gce.Disks(project)))
		}
		last := len(w.gce.Disks(project)) == len(used) || run == 25
		killAt.Store(0)
		var delay time.Duration
		afterLine := 0 // kill once the audit log has this many lines
		if !last {
			switch rng.IntN(3) {
			case 0: // as a delete completes, before reclaim hears of it
				killAt.Store(deletes.Load() + 1 + int32(rng.IntN(8)))
			case 1: // anywhere: listing, planning, saving, deleting
				delay = time.Duration(rng.IntN(1500)) * time.Millisecond
			case 2: // right after an audit line, before the state records it
				afterLine = auditLines(w.auditPath()) + 1 + rng.IntN(4)
			}
		}
		c := exec.Command(reclaimBin, "run", "--apply", "--config", cfg)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		proc.Store(c.Process)
		if delay > 0 {
			timer := time.AfterFunc(delay, func() { _ = c.Process.Signal(syscall.SIGKILL) })
			defer timer.Stop()
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
					if auditLines(w.auditPath()) >= afterLine {
						_ = c.Process.Signal(syscall.SIGKILL)
						return
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
		}
		err := c.Wait()
		close(stop)
		proc.Store(nil)
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		// GCE finishes a delete operation whether or not anyone waits.
		w.gce.CompleteOperations()
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
		t.Logf("run %d: killed %v (at delete %d, after %s, at audit line %d), %d disks left: %s", run, killed, killAt.Load(), delay, afterLine, len(w.gce.Disks(project)), lastLine(out.String()))
		if last && !killed {
			break
		}
	}
	if kills < 3 {
		t.Fatalf("only %d runs were killed: the test did not exercise kills", kills)
	}
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
	count := map[string]int{}
	for _, r := range w.audit() {
		if r.Done() {
			count[r.ID]++
		}
	}
	for _, k := range keys {
		if count[k] != 1 {
			t.Fatalf("audit records the delete of %s %d times (%d runs killed)", k, count[k], kills)
		}
	}
	t.Logf("%d runs killed before convergence", kills)
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
