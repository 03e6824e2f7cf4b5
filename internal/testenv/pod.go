package testenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Manifest is a container of deploy/ whose environment a Pod gets.
type Manifest string

// The containers deploy/ runs reclaim in.
const (
	CronJob Manifest = "deploy/overlays/cronjob/cronjob.yaml"
	Daemon  Manifest = "deploy/overlays/daemon/deployment.yaml"
	Agent   Manifest = "deploy/overlays/agent/cronjob.yaml"
)

// PodUser is the image's USER (distroless nonroot). A test process running
// as root runs the binary as this user, so that what the pod may not read
// or write, it may not here either.
const PodUser = 65532

// imageEnv is what the image itself sets (gcr.io/distroless/static-debian12's
// config: `docker inspect` shows it): a PATH and the CA file, nothing else.
// The runtime adds HOSTNAME; HOME is left unset here, the strictest case.
var imageEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
}

// noMetadata points the clouds' metadata servers at a closed loopback port:
// these machines may send nothing to link-local addresses, and a pod with no
// Workload Identity or IRSA finds no credentials there either. A test of a
// metadata server of its own overrides them in Env.
var noMetadata = []string{
	"AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9",
	"GCE_METADATA_HOST=127.0.0.1:9",
}

// Pod runs a binary as a reclaim container runs: the environment cleared
// to what the image and the manifest set plus the test's own variables
// (endpoints, credentials), no HOME, a working directory it cannot write,
// and, when the test runs as root, the image's non-root user. Every test
// that runs the built binary goes through it (TestBinaryRunsAsAPod checks).
type Pod struct {
	// Manifest is the container whose env applies; default CronJob.
	Manifest Manifest
	// Namespace fills a fieldRef to metadata.namespace; default "reclaim".
	Namespace string
	// Env is the test's own: endpoints, credentials, secrets the config
	// names. It is added last, so it may override the manifest's.
	Env []string
}

// Command is exec.CommandContext(ctx, bin, args...) as the pod would run
// it. Make it after writing the files it reads: the test's temporary
// directory, and every absolute path named in args or Env, are made
// readable and writable by the pod's user then.
func (p Pod) Command(ctx context.Context, tb testing.TB, bin string, args ...string) *exec.Cmd {
	tb.Helper()
	env, err := p.Environ()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Dir = readOnlyDir(tb)
	if os.Geteuid() == 0 && runtime.GOOS == "linux" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: PodUser, Gid: PodUser}}
		named := append([]string{bin}, args...)
		for _, kv := range p.Env {
			if _, v, ok := strings.Cut(kv, "="); ok {
				named = append(named, v)
			}
		}
		if err := shareWithPod(tb, named); err != nil {
			tb.Fatal(err)
		}
	}
	setPdeathsig(cmd)
	return cmd
}

// Environ is the pod's environment: the image's, the manifest's container
// env (literal values and the namespace fieldRef), then p.Env.
func (p Pod) Environ() ([]string, error) {
	m := p.Manifest
	if m == "" {
		m = CronJob
	}
	ns := p.Namespace
	if ns == "" {
		ns = "reclaim"
	}
	c, err := ManifestContainer(m)
	if err != nil {
		return nil, err
	}
	env := append(append([]string(nil), imageEnv...), noMetadata...)
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+ns)
		default:
			return nil, fmt.Errorf("testenv: %s: env %s comes from a source Pod does not fill in; teach Pod.Environ", m, e.Name)
		}
	}
	return append(env, p.Env...), nil
}

// ManifestContainer reads the reclaim container of a deploy/ manifest (a
// CronJob or a Deployment).
func ManifestContainer(m Manifest) (corev1.Container, error) {
	root, err := RepoRoot()
	if err != nil {
		return corev1.Container{}, err
	}
	raw, err := os.ReadFile(filepath.Join(root, string(m)))
	if err != nil {
		return corev1.Container{}, fmt.Errorf("testenv: %w", err)
	}
	var obj struct {
		Kind string `json:"kind"`
		Spec struct {
			Template    struct{ Spec corev1.PodSpec } `json:"template"`
			JobTemplate struct {
				Spec struct {
					Template struct{ Spec corev1.PodSpec } `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return corev1.Container{}, fmt.Errorf("testenv: %s: %w", m, err)
	}
	spec := obj.Spec.Template.Spec
	if obj.Kind == "CronJob" {
		spec = obj.Spec.JobTemplate.Spec.Template.Spec
	}
	for _, c := range spec.Containers {
		if c.Name == "reclaim" {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("testenv: %s: no container named reclaim", m)
}

// readOnlyDir is the working directory: the image's root is read-only.
func readOnlyDir(tb testing.TB) string {
	dir := filepath.Join(tb.TempDir(), "workdir")
	if err := os.Mkdir(dir, 0o555); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// shareWithPod opens the test's temporary directory to the pod's user,
// and each named path that exists under the system's temporary directory,
// with its parent (a state file's directory must be writable), and lets
// the user through every directory above them. Paths elsewhere are left
// as they are: a repository checkout or a home directory is not the test's
// to open.
func shareWithPod(tb testing.TB, named []string) error {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return err
	}
	testRoot := filepath.Dir(tb.TempDir())
	open := []string{testRoot}
	for _, n := range named {
		if !filepath.IsAbs(n) {
			continue
		}
		n = filepath.Clean(n)
		if _, err := os.Stat(n); err == nil {
			open = append(open, n)
		}
		if _, err := os.Stat(filepath.Dir(n)); err == nil {
			open = append(open, filepath.Dir(n))
		}
	}
	for _, p := range open {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || real == tmp || !strings.HasPrefix(real, tmp+string(filepath.Separator)) {
			continue
		}
		if err := openTree(real); err != nil {
			return err
		}
		for d := filepath.Dir(real); d != tmp && strings.HasPrefix(d, tmp); d = filepath.Dir(d) {
			if err := addMode(d, 0o111); err != nil {
				return err
			}
		}
	}
	return nil
}

// openTree gives everyone read and write (and search, on directories) under
// root, which is a throw-away test directory.
func openTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "workdir" && p != root {
				return fs.SkipDir // a pod's read-only working directory
			}
			return addMode(p, 0o777)
		}
		if d.Type().IsRegular() {
			return addMode(p, 0o666)
		}
		return nil
	})
}

func addMode(p string, bits fs.FileMode) error {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if fi.Mode().Perm()&bits == bits {
		return nil
	}
	return os.Chmod(p, fi.Mode().Perm()|bits|fi.Mode()&(fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid))
}
