package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/reconcile/audit"
)

// The memory a pod needs is the memory of a process with nothing but
// reclaim in it: the benchmarks' fakes and fixtures live in the test
// process, so a fleet benchmark measures peak RSS by running the real
// binary against them, as the deployed CronJob runs it.

var reclaimBin struct {
	once sync.Once
	path string
	err  error
}

// TestMain removes the binary the benchmarks built (174 MB a run otherwise
// left in the temporary directory), and fails a process whose tests made a
// call no kind or read declares (calls_test.go).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = checkCalls()
	}
	if reclaimBin.path != "" {
		os.RemoveAll(filepath.Dir(reclaimBin.path))
	}
	os.Exit(code)
}

// reclaimBinary builds cmd/reclaim once per test process, as the image does.
// BENCH_RECLAIM_BIN=FILE runs that binary instead (built as the image is),
// so that two builds can be measured side by side on the same machine.
func reclaimBinary(b *testing.B) string {
	b.Helper()
	if path := os.Getenv("BENCH_RECLAIM_BIN"); path != "" {
		return path
	}
	reclaimBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "reclaim-bench-")
		if err != nil {
			reclaimBin.err = err
			return
		}
		reclaimBin.path = filepath.Join(dir, "reclaim")
		reclaimBin.err = testenv.BuildReclaim(context.Background(), reclaimBin.path)
	})
	if reclaimBin.err != nil {
		b.Fatal(reclaimBin.err)
	}
	return reclaimBin.path
}

// podRun is what one run of the binary did.
type podRun struct {
	Deleted, Failed int // delete records of the audit log
	ExitCode        int
	Report          string // the text report's last lines
	Stdout          []byte // all of it
	PeakRSS         uint64 // bytes: the kernel's high-water mark of the process
	PeakFileRSS     uint64 // bytes of it that were the binary's own pages (RssFile) when last sampled at the peak
	CPU, Wall       time.Duration
	User, Sys       time.Duration // CPU's two parts: the kernel's (Sys) counts fsyncs and writes
}

// runAsPod runs `reclaim run --config cfg --log-json args...` as the
// CronJob does (testenv.Pod: the deploy's environment, GOMEMLIMIT and GOGC
// included, unless this process sets its own) with AWS credentials for the
// fakes; auditFile is the config's audit file.
func runAsPod(b *testing.B, cfg, auditFile string, args ...string) podRun {
	b.Helper()
	env := []string{"AWS_ACCESS_KEY_ID=AKIDBENCH", "AWS_SECRET_ACCESS_KEY=bench-secret", "AWS_REGION=us-east-1"}
	for _, k := range []string{"GOMEMLIMIT", "GOGC", "GODEBUG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	bin := reclaimBinary(b)
	evictPages(bin)
	cmd := testenv.Pod{Env: env}.Command(context.Background(), b, bin, append([]string{"run", "--config", cfg, "--log-json"}, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, io.Discard
	// BENCH_POD_STDERR=FILE keeps the binary's log (with GODEBUG=gctrace=1
	// in the environment, the heap after every GC).
	if path := os.Getenv("BENCH_POD_STDERR"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.Stderr = f
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("reclaim run: %v", err)
	}
	hwm := watchHWM(cmd.Process.Pid)
	err := cmd.Wait()
	peak, peakFile := hwm()
	if cmd.ProcessState == nil {
		b.Fatalf("reclaim run: %v", err)
	}
	r := podRun{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.Bytes(), Report: tail(stdout.String(), 2000), Wall: time.Since(start),
		User: cmd.ProcessState.UserTime(), Sys: cmd.ProcessState.SystemTime()}
	r.CPU = r.User + r.Sys
	r.PeakRSS, r.PeakFileRSS = peak, peakFile
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && peak == 0 {
		// No /proc: the rusage, which Linux makes at least the parent's
		// RSS at the exec (see watchHWM), so an upper bound.
		r.PeakRSS = uint64(ru.Maxrss) << 10
	}
	f, err := os.Open(auditFile)
	if err != nil {
		b.Fatalf("reclaim run (exit %d): %v\n%s", r.ExitCode, err, r.Report)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	for {
		var rec struct{ Action, Result string }
		if err := dec.Decode(&rec); err == io.EOF {
			break
		} else if err != nil {
			b.Fatalf("audit log: %v", err)
		}
		if rec.Action != "delete" {
			continue
		}
		switch rec.Result {
		case audit.Deleted, audit.AlreadyGone:
			r.Deleted++
		case audit.Failed:
			r.Failed++
		}
	}
	return r
}

// reportMemory reports the run's peak RSS against target (bytes) as
// benchmark metrics, and logs it with what the run did.
func (r podRun) reportMemory(b *testing.B, target uint64, did string) {
	b.Helper()
	b.ReportMetric(float64(r.PeakRSS)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(r.PeakRSS)/float64(target), "peak-rss/target")
	verdict := "within"
	if r.PeakRSS > target {
		verdict = "OVER"
	}
	b.Logf("as a pod (the binary alone, GOMEMLIMIT %s, GOGC %s): %s in %s (%s CPU: %s user, %s sys), peak RSS %d MiB (%d MiB of it the binary's own pages) = %.2f× the %d MiB target: %s",
		podEnv(b, "GOMEMLIMIT"), podEnv(b, "GOGC"), did, r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.User.Round(time.Millisecond), r.Sys.Round(time.Millisecond),
		r.PeakRSS>>20, r.PeakFileRSS>>20, float64(r.PeakRSS)/float64(target), target>>20, verdict)
}

// podEnv is the value of k in the pod's environment (runAsPod's).
func podEnv(b *testing.B, k string) string {
	if v, ok := os.LookupEnv(k); ok {
		return v
	}
	env, err := testenv.Pod{}.Environ()
	if err != nil {
		b.Fatal(err)
	}
	v := ""
	for _, kv := range env {
		if key, val, _ := strings.Cut(kv, "="); key == k {
			v = val
		}
	}
	return v
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// watchHWM polls the kernel's high-water mark of a process's resident set
// (VmHWM in /proc/PID/status) until it exits, and returns a func giving the
// highest seen and the file-backed share (RssFile, the binary's pages) seen
// with it. The rusage of a child cannot be used: Go starts it with vfork,
// and at the exec Linux carries the parent's resident high-water mark into
// the child's ru_maxrss, so a child of a test process holding gigabytes of
// fixtures reports gigabytes. VmHWM belongs to the new program's memory. It
// only rises, so a poll every 10 ms misses at most the last 10 ms.
func watchHWM(pid int) func() (peak, file uint64) {
	var mu sync.Mutex
	var hwm, fileAtPeak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	kb := func(v string) uint64 {
		n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		return n << 10
	}
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		var h, f uint64
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				h = kb(v)
			} else if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
				f = kb(v)
			}
		}
		mu.Lock()
		if h > hwm {
			hwm, fileAtPeak = h, f
		}
		mu.Unlock()
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return hwm, fileAtPeak
	}
}
