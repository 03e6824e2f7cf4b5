package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// EnvTestBins overrides the directory holding the etcd and kube-apiserver
// binaries (default <repo root>/.cache/testbins).
const EnvTestBins = "RECLAIM_TESTBINS"

var binMu sync.Mutex // serializes Binaries within one process; flock does across processes

// Binaries returns the paths of the etcd and kube-apiserver binaries, running
// internal/testenv/testbins/build.sh (output streamed to stderr) if either is missing. A
// flock on <dir>/.build.lock makes concurrent callers, including other test
// binaries running in parallel, wait for a single build instead of starting
// their own.
func Binaries() (etcd, apiserver string, err error) {
	binMu.Lock()
	defer binMu.Unlock()

	dir := os.Getenv(EnvTestBins)
	var root string
	if dir == "" {
		if root, err = RepoRoot(); err != nil {
			return "", "", err
		}
		dir = filepath.Join(root, ".cache", "testbins")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	etcd, apiserver = filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	if isExecutable(etcd) && isExecutable(apiserver) {
		return etcd, apiserver, nil
	}

	if root == "" {
		if root, err = RepoRoot(); err != nil {
			return "", "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	unlock, err := lockFile(filepath.Join(dir, ".build.lock"), func() {
		fmt.Fprintf(os.Stderr, "testenv: waiting for another process building the test binaries in %s\n", dir)
	})
	if err != nil {
		return "", "", fmt.Errorf("testenv: locking test binaries dir: %w", err)
	}
	defer unlock()
	// Somebody else may have finished the build while we waited for the lock.
	if isExecutable(etcd) && isExecutable(apiserver) {
		return etcd, apiserver, nil
	}

	script := buildScript(root)
	fmt.Fprintf(os.Stderr, "testenv: %s or %s missing; running %s (about 8 minutes cold)\n", etcd, apiserver, script)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), EnvTestBins+"="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	setPdeathsig(cmd)
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("testenv: %s: %w", script, err)
	}
	if !isExecutable(etcd) || !isExecutable(apiserver) {
		return "", "", fmt.Errorf("testenv: %s succeeded but %s or %s is still missing", script, etcd, apiserver)
	}
	return etcd, apiserver, nil
}

// RepoRoot returns the nearest directory at or above the working directory
// that holds a go.mod file.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.mod found above the working directory")
		}
		dir = parent
	}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// buildScript is the script that builds the test binaries (a separate module,
// so k8s.io/kubernetes never enters reclaim's go.mod).
func buildScript(root string) string {
	return filepath.Join(root, "internal", "testenv", "testbins", "build.sh")
}
