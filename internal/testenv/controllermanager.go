package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ControllerManagerBin is the binary's name in the test binaries directory.
// Unlike etcd and kube-apiserver it is built only when a test asks for it
// (internal/testenv/testbins/build.sh kube-controller-manager).
const ControllerManagerBin = "kube-controller-manager"

// gcSynced is what the garbage collector logs once every resource monitor
// has synced: from then on it collects dependents of deleted owners.
const gcSynced = "All resource monitors have synced"

// ControllerManager is a kube-controller-manager running against a Cluster
// with only the controllers it was started with.
type ControllerManager struct {
	proc     *process
	stopOnce sync.Once
}

// Log returns the path of its combined stdout/stderr log.
func (m *ControllerManager) Log() string { return m.proc.logPath }

// Stop kills it. Idempotent.
func (m *ControllerManager) Stop() {
	m.stopOnce.Do(func() { m.proc.kill() })
}

// ControllerManagerBinary returns the kube-controller-manager binary's path,
// building it (under the same lock as Binaries) if it is missing: about 3
// minutes on 2 cores with a Go cache warm from kube-apiserver's build.
func ControllerManagerBinary() (string, error) {
	return toolBinary(ControllerManagerBin, ControllerManagerBin)
}

// toolBinary returns the path of the test binary name, running the build
// script with args (under the same lock as Binaries) if it is missing.
func toolBinary(name string, args ...string) (string, error) {
	binMu.Lock()
	defer binMu.Unlock()
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := os.Getenv(EnvTestBins)
	if dir == "" {
		dir = filepath.Join(root, ".cache", "testbins")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, ".build.lock"), func() {
		fmt.Fprintf(os.Stderr, "testenv: waiting for another process building the test binaries in %s\n", dir)
	})
	if err != nil {
		return "", fmt.Errorf("testenv: locking test binaries dir: %w", err)
	}
	defer unlock()
	if isExecutable(bin) {
		return bin, nil
	}
	script := buildScript(root)
	fmt.Fprintf(os.Stderr, "testenv: %s missing; running %s %s\n", bin, script, strings.Join(args, " "))
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), EnvTestBins+"="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	setPdeathsig(cmd)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testenv: %s %s: %w", script, strings.Join(args, " "), err)
	}
	if !isExecutable(bin) {
		return "", fmt.Errorf("testenv: %s succeeded but %s is still missing", script, bin)
	}
	return bin, nil
}

// StartGarbageCollector starts a kube-controller-manager against c that
// runs only the garbage collector (no leader election, no cloud provider, no
// serving port) and waits until the collector has synced its monitors, so
// that the dependents of an owner deleted from then on are collected. The
// process is killed by Stop, or when the test process exits.
func (c *Cluster) StartGarbageCollector(ctx context.Context) (*ControllerManager, error) {
	bin, err := ControllerManagerBinary()
	if err != nil {
		return nil, err
	}
	m := &ControllerManager{proc: &process{name: ControllerManagerBin,
		logPath: filepath.Join(c.Dir, fmt.Sprintf("kube-controller-manager-%d.log", time.Now().UnixNano()))}}
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--controllers=garbagecollector",
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		// The admin token is all it needs; nothing reaches it.
		"--authentication-skip-lookup=true",
		"--concurrent-gc-syncs=5",
		"--v=2",
	}
	if err := m.proc.start(bin, args); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(m.proc.logPath); err == nil && strings.Contains(string(b), gcSynced) {
			return m, nil
		}
		select {
		case <-m.proc.done:
			return nil, m.proc.exitError()
		case <-ctx.Done():
			m.Stop()
			return nil, fmt.Errorf("testenv: garbage collector of %s not synced: %w; last lines of %s:\n%s",
				c.Name, ctx.Err(), filepath.Base(m.proc.logPath), logTail(m.proc.logPath, 40))
		case <-tick.C:
		}
	}
}
