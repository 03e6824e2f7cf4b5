package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func execute(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	root := newRoot(&o, &e)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return o.String(), e.String(), err
}

func TestConfigCheckReportsEveryProblem(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(p, []byte("clusters:\n  - name: a\n    timeout: 2x\ngce:\n  projcts: [x]\n"), 0o644)
	_, _, err := execute("config", "check", p)
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{`clusters[0].timeout: "2x" is not a duration`, `gce.projcts: unknown field — did you mean "projects"?`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// config check says which kinds the file turns on: each kind's own
// section, registered from its package.
func TestConfigCheckExamples(t *testing.T) {
	for f, kinds := range map[string]string{
		"demo.yaml":      "gce-disk, k8s-pvc, ecr-image, ec2-interface, k8s-job, k8s-pod, ebs-volume, ebs-snapshot, gce-snapshot",
		"gke.yaml":       "gce-disk, k8s-pvc",
		"eks.yaml":       "k8s-pvc, ecr-image, ec2-interface, k8s-job, k8s-pod",
		"reference.yaml": "gce-disk, k8s-pvc, ecr-image, ec2-interface, k8s-job, k8s-pod",
	} {
		// --offline: the examples name kubeconfigs this machine has not.
		out, _, err := execute("config", "check", "--offline", filepath.Join("..", "..", "configs", f))
		if err != nil || !strings.Contains(out, ": ok (") || !strings.Contains(out, "; kinds: "+kinds+")") {
			t.Errorf("%s: %v %s, want kinds %s", f, err, out, kinds)
		}
	}
}

func TestRunExitStatusWhenIncomplete(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.yaml")
	os.WriteFile(p, []byte(`clusters:
  - name: nowhere
    kubeconfig: `+filepath.Join(dir, "missing-kubeconfig")+`
state:
  file: `+filepath.Join(dir, "state.json")+`
audit:
  file: `+filepath.Join(dir, "audit.jsonl")+`
`), 0o644)
	out, _, err := execute("run", "--config", p, "--metrics-textfile", filepath.Join(dir, "reclaim.prom"))
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("err %v, want exit 3\n%s", err, out)
	}
	if !strings.Contains(out, "cluster nowhere") || !strings.Contains(out, "INCOMPLETE") {
		t.Fatalf("report:\n%s", out)
	}
	prom, err := os.ReadFile(filepath.Join(dir, "reclaim.prom"))
	if err != nil || !strings.Contains(string(prom), `reclaim_source_complete{kind="cluster",name="nowhere"} 0`) {
		t.Fatalf("metrics: %v\n%s", err, prom)
	}
}

// A command line reclaim cannot parse exits 2, apart from a bad config (1):
// a script can tell a wrong call from a wrong file.
func TestExitCodes(t *testing.T) {
	good := filepath.Join("..", "..", "configs", "demo.yaml")
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"run", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"nope"}, exitUsage, `unknown command "nope"`},
		{[]string{"run", "extra"}, exitUsage, `unknown command "extra"`},
		{[]string{"version", "extra"}, exitUsage, "unknown command"},
		{[]string{"config", "check", "a.yaml", "b.yaml"}, exitUsage, "accepts at most 1 arg"},
		{[]string{"config", "check", "--config", good, "other.yaml"}, exitUsage, "two files to check"},
		{[]string{"config", "check", filepath.Join(t.TempDir(), "missing.yaml")}, 1, "cannot read the configuration file"},
		{[]string{"config", "check", "--offline", "--config", good}, 0, ""},
		{[]string{"config", "check", "--offline", good}, 0, ""},
	} {
		_, _, err := execute(c.args...)
		var stderr bytes.Buffer
		if code := exitCode(err, &stderr); code != c.code || !strings.Contains(stderr.String(), c.out) {
			t.Errorf("reclaim %s: exit %d %q, want %d with %q", strings.Join(c.args, " "), code, stderr.String(), c.code, c.out)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	out, _, err := execute("--version")
	if err != nil || !strings.HasPrefix(out, "reclaim ") {
		t.Fatalf("--version: %q %v", out, err)
	}
	if v, _, _ := execute("version"); v != out {
		t.Fatalf("reclaim version says %q, --version %q", v, out)
	}
}

// config check loads every kubeconfig and context the clusters name: one
// missing is found now, not by every hourly run exiting 3.
func TestConfigCheckReachesKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n  - name: a\n    cluster: {server: https://127.0.0.1:6443}\nusers:\n  - name: u\n    user: {token: x}\ncontexts:\n  - name: a\n    context: {cluster: a, user: u}\n"), 0o600)
	cfg := func(clusters string) string {
		p := filepath.Join(dir, "r.yaml")
		os.WriteFile(p, []byte("clusters:\n"+clusters+"gce:\n  projects: [my-project-1]\n"), 0o600)
		return p
	}
	good := cfg("  - name: a\n    kubeconfig: " + kc + "\n    context: a\n")
	if out, _, err := execute("config", "check", good); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("a reachable context: %v %s", err, out)
	}
	bad := cfg("  - name: a\n    kubeconfig: " + kc + "\n    context: a\n  - name: b\n    kubeconfig: " + kc + "\n    context: b\n  - name: c\n    kubeconfig: " + filepath.Join(dir, "nope") + "\n    context: c\n")
	_, _, err := execute("config", "check", bad)
	var stderr bytes.Buffer
	if code := exitCode(err, &stderr); code != 1 || !strings.Contains(err.Error(), "2 of its clusters cannot be reached") ||
		!strings.Contains(err.Error(), `cluster b: kubeconfig `+kc+`: context "b" not found (it has "a")`) || !strings.Contains(err.Error(), "cluster c: kubeconfig") {
		t.Fatalf("exit %d: %v", code, err)
	}
	if _, _, err := execute("config", "check", "--offline", bad); err != nil {
		t.Fatalf("--offline still reached the kubeconfigs: %v", err)
	}
}

// config check refuses what the run would: a deleter's config with
// fleet.records whose clusters name a kubeconfig (the run reads records
// and dials none); the same file checked as an agent's is refused too
// (an agent runs in its cluster), unless the agent reads from outside on
// purpose.
func TestConfigCheckRefusesWhatTheRunRefuses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.yaml")
	os.WriteFile(p, []byte(`clusters:
  - name: prod-eu
    kubeconfig: /etc/reclaim/kubeconfig
    context: prod-eu
    platform: eks
    account: "123456789012"
    location: us-east-1
fleet:
  records:
    bucket: my-reclaim-records
    account: "123456789012"
    region: us-east-1
jobs:
  succeeded: 6h
`), 0o600)
	_, _, err := execute("config", "check", "--offline", p)
	if err == nil || !strings.Contains(err.Error(), "clusters[0]: with fleet.records, reclaim run reads each cluster from its agent's record and dials none") ||
		!strings.Contains(err.Error(), "--agent") {
		t.Fatalf("a deleter's config that dials a cluster: %v", err)
	}
	// As an agent's, it names a kubeconfig: refused as reclaim agent
	// refuses it, unless it runs with --outside-cluster.
	if _, _, err := execute("config", "check", "--offline", "--agent", p); err == nil || !strings.Contains(err.Error(), "inCluster: true") {
		t.Fatalf("as an agent's config: %v", err)
	}
	if out, _, err := execute("config", "check", "--offline", "--agent", "--outside-cluster", p); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("as an agent's config, --outside-cluster: %v %s", err, out)
	}
}

// config check refuses an out-of-scope declaration that does not name one
// cluster (here only its name and platform), as the run does, naming each
// field to add.
func TestConfigCheckRefusesAPartialOutOfScope(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.yaml")
	os.WriteFile(p, []byte(`clusters:
  - name: prod
    context: prod
fleet:
  discover: false
  outOfScope:
    - name: legacy
      reason: decommissioned, OPS-1234
      platform: eks
jobs:
  succeeded: 6h
`), 0o600)
	_, _, err := execute("config", "check", "--offline", p)
	for _, want := range []string{"fleet.outOfScope[0].account: is required", "fleet.outOfScope[0].location: is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
