package e2e

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
)

// A gzip bomb at two clusters' keys (a few MiB that decompress to 1.2 GiB
// each, more than the old 1 GiB bound) holds both clusters, and the
// deleter binary, run as the CronJob runs it (deploy's GOMEMLIMIT 280MiB
// under a 512Mi limit), reads it with its peak RSS (the kernel's VmHWM)
// within that target: each record decompresses to no more than its gzip
// trailer says, nor than fleet.records.maxRecordSize.
func TestRecordBombHoldsWithinTheDeletersMemory(t *testing.T) {
	const target = 280 << 20 // deploy/overlays/cronjob's GOMEMLIMIT
	w := newAgentWorld(t)
	w.agents()
	b := testenv.GzipBomb(t, 1200)
	ctx := context.Background()
	for _, k := range []string{keyOf(placeA, "prod-a"), keyOf(placeB, "prod-b")} {
		if err := w.admin.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	cmd := reclaimCmd(ctx, t, testenv.CronJob, nil, "run", "--config", w.deleterConfig(), "-o", "json")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	hwm := peak()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("the deleter: %v, want exit 3 (held)\n%s", err, out.String())
	}
	for _, c := range []string{"prod-a", "prod-b"} {
		if !strings.Contains(out.String(), "clusters/"+map[string]string{"prod-a": "eks", "prod-b": "gke"}[c]) || !strings.Contains(out.String(), "maxRecordSize") {
			t.Fatalf("the report does not hold %s for its record's size:\n%s", c, out.String())
		}
	}
	t.Logf("a %d KiB bomb of 1200 MiB at two keys: the deleter's peak RSS %d MiB, target %d MiB", len(b)>>10, hwm>>20, target>>20)
	if hwm == 0 {
		t.Skip("no /proc: the peak RSS cannot be read")
	}
	if hwm > target {
		t.Fatalf("the deleter's peak RSS %d MiB is over its %d MiB target", hwm>>20, target>>20)
	}
}

// watchPeakRSS polls a process's VmHWM (the kernel's high-water mark of
// its resident set, which only rises) every 10 ms until the returned func
// is called, and returns the highest seen; 0 without /proc.
func watchPeakRSS(pid int) func() uint64 {
	var mu sync.Mutex
	var hwm uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	go func() {
		defer close(stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
						mu.Lock()
						hwm = max(hwm, kb<<10)
						mu.Unlock()
					}
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return hwm
	}
}
