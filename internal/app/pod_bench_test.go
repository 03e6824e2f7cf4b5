package app

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"reclaim.dev/reclaim/engine"
)

// The memory a pod needs is the memory of a process with nothing but
// reclaim in it: the benchmarks' fakes and fixtures live in the test
// process, so a fleet benchmark measures peak RSS by running the real
// binary against them, as the deployed CronJob runs it.

// deployMemLimit is the GOMEMLIMIT deploy/ sets (CronJob, daemon, Helm).
const deployMemLimit = "280MiB"

var reclaimBin struct {
	once sync.Once
	path string
	err  error
}

// reclaimBinary builds cmd/reclaim once per test process.
func reclaimBinary(b *testing.B) string {
	b.Helper()
	reclaimBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "reclaim-bench-")
		if err != nil {
			reclaimBin.err = err
			return
		}
		reclaimBin.path = filepath.Join(dir, "reclaim")
		out, err := exec.Command("go", "build", "-o", reclaimBin.path, "reclaim.dev/reclaim/cmd/reclaim").CombinedOutput()
		if err != nil {
			reclaimBin.err = &buildError{err, out}
		}
	})
	if reclaimBin.err != nil {
		b.Fatal(reclaimBin.err)
	}
	return reclaimBin.path
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build cmd/reclaim: " + e.err.Error() + "\n" + string(e.out)
}

// podRun is what one run of the binary did.
type podRun struct {
	Deleted, Failed int // delete records of the audit log
	ExitCode        int
	Report          string // the text report's last lines
	PeakRSS         uint64 // bytes: the kernel's high-water mark of the process
	CPU, Wall       time.Duration
}

// runAsPod runs `reclaim run --config cfg --log-json args...` as the
// CronJob does, in its own process with the deploy's GOMEMLIMIT (an
// explicit GOMEMLIMIT in the environment wins) and AWS credentials for the
// fakes; audit is the config's audit file.
func runAsPod(b *testing.B, cfg, audit string, args ...string) podRun {
	b.Helper()
	cmd := exec.Command(reclaimBinary(b), append([]string{"run", "--config", cfg, "--log-json"}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDBENCH", "AWS_SECRET_ACCESS_KEY=bench-secret", "AWS_REGION=us-east-1")
	if os.Getenv("GOMEMLIMIT") == "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+deployMemLimit)
	}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, io.Discard
	start := time.Now()
	err := cmd.Run()
	if cmd.ProcessState == nil {
		b.Fatalf("reclaim run: %v", err)
	}
	r := podRun{ExitCode: cmd.ProcessState.ExitCode(), Report: tail(stdout.String(), 2000), Wall: time.Since(start),
		CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSS = uint64(ru.Maxrss) << 10 // KiB on Linux
	}
	f, err := os.Open(audit)
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
		case engine.ResultDeleted, engine.ResultAlreadyGone:
			r.Deleted++
		case engine.ResultFailed:
			r.Failed++
		}
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
