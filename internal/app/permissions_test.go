package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"reclaim.dev/reclaim/base/perms"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/daemon"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
	"reclaim.dev/reclaim/reconcile/state"
)

// The tests below hold deploy/ to what the kinds and shared reads declare
// (app.Permissions, daemon.Permissions): each policy, role and RBAC file
// grants exactly its part, nothing missing and nothing extra.

func TestAWSPoliciesGrantExactlyTheDeclaredActions(t *testing.T) {
	p := app.Permissions()
	sameGrants(t, "deploy/aws/iam-policy-readonly.json", iamActions(t, "deploy/aws/iam-policy-readonly.json"), p.Read.IAM)
	sameGrants(t, "deploy/aws/iam-policy.json", iamActions(t, "deploy/aws/iam-policy.json"), p.All().IAM)
	// With fleet.records the deleter adds the records' read; an agent's
	// role holds only the write of its record.
	sameGrants(t, "deploy/aws/iam-policy-records-read.json", iamActions(t, "deploy/aws/iam-policy-records-read.json"), app.RecordsPermissions.All().IAM)
	agent := app.AgentPermissions()
	sameGrants(t, "deploy/aws/iam-policy-agent.json", iamActions(t, "deploy/aws/iam-policy-agent.json"), agent.All().IAM)
	// The cross-account trust policy lets reclaim's role assume another:
	// only actions the code calls outside the policies (sts:AssumeRole).
	for _, a := range iamActions(t, "deploy/aws/trust-policy-cross-account.json") {
		if !slices.Contains(p.Outside, a) {
			t.Errorf("deploy/aws/trust-policy-cross-account.json grants %s, which no kind or read declares", a)
		}
	}
}

func TestGCPRolesGrantExactlyTheDeclaredPermissions(t *testing.T) {
	p := app.Permissions()
	sameGrants(t, "deploy/gcp/iam-role-readonly.yaml", gcpPermissions(t, "deploy/gcp/iam-role-readonly.yaml"), p.Read.GCP)
	sameGrants(t, "deploy/gcp/iam-role.yaml", gcpPermissions(t, "deploy/gcp/iam-role.yaml"), p.All().GCP)
	// Records in GCS: the deleter's read, and the agent's write of its
	// own record (its only GCP grant).
	sameGrants(t, "deploy/gcp/iam-role-records-reader.yaml", gcpPermissions(t, "deploy/gcp/iam-role-records-reader.yaml"), app.RecordsPermissions.All().GCP)
	sameGrants(t, "deploy/gcp/iam-role-agent.yaml", gcpPermissions(t, "deploy/gcp/iam-role-agent.yaml"), app.AgentPermissions().All().GCP)
}

// A shared read a kind relies on must say what it needs, or the kind's
// needs would be silently short.
func TestEverySharedReadDeclaresItsPermissions(t *testing.T) {
	for _, r := range app.Registered {
		for _, name := range r.Reads {
			if _, ok := kube.ReadPermissions[name]; !ok {
				t.Errorf("kind %s relies on shared read %q, which kube.ReadPermissions does not declare", r.Name, name)
			}
		}
	}
}

// The kustomize install: base (every run's reads and the state store), the
// daemon overlay's Lease, and one component per delete grant.
func TestRBACGrantsExactlyTheDeclaredRules(t *testing.T) {
	p := app.Permissions()
	sameGrants(t, "deploy/base/rbac.yaml", rbacLines(t, read(t, "deploy/base/rbac.yaml")), p.Read.RBACLines())
	sameGrants(t, "deploy/overlays/daemon/lease-rbac.yaml", rbacLines(t, read(t, "deploy/overlays/daemon/lease-rbac.yaml")),
		daemon.Permissions.Read.RBACLines())
	// Which kinds' deletes each component grants (deploy/README.md says
	// which config needs which).
	components := []struct {
		file  string
		kinds []perms.Set
	}{
		{"deploy/components/pvc-deleter/rbac.yaml", []perms.Set{k8spvc.Permissions}},
		{"deploy/components/workload-deleter/rbac.yaml", []perms.Set{k8sjob.Permissions, k8spod.Permissions}},
	}
	var granted []string
	for _, c := range components {
		lines := rbacLines(t, read(t, c.file))
		sameGrants(t, c.file, lines, perms.Union(c.kinds...).Delete.RBACLines())
		granted = append(granted, lines...)
	}
	// A kind's delete no component grants would fail with Forbidden.
	sameGrants(t, "deploy/components", granted, p.Delete.RBACLines())

	// The agent overlay's reads, and its components' deletes: those of
	// the in-cluster kinds, one component each.
	agent := app.AgentPermissions()
	sameGrants(t, "deploy/overlays/agent/rbac.yaml", rbacLines(t, read(t, "deploy/overlays/agent/rbac.yaml")), agent.Read.RBACLines())
	granted = nil
	for _, c := range []struct {
		file  string
		kinds []perms.Set
	}{
		{"deploy/components/agent-pvc-deleter/rbac.yaml", []perms.Set{k8spvc.Permissions}},
		{"deploy/components/agent-workload-deleter/rbac.yaml", []perms.Set{k8sjob.Permissions, k8spod.Permissions}},
	} {
		lines := rbacLines(t, read(t, c.file))
		sameGrants(t, c.file, lines, perms.Union(c.kinds...).Delete.RBACLines())
		granted = append(granted, lines...)
	}
	sameGrants(t, "deploy/components/agent-*", granted, agent.Delete.RBACLines())
	// Watch mode adds list and watch on what the agent watches.
	sameGrants(t, "deploy/components/agent-watch/rbac.yaml", rbacLines(t, read(t, "deploy/components/agent-watch/rbac.yaml")), kube.WatchPermissions.Read.RBACLines())
}

// The installs as users make them, rendered as `kubectl kustomize` and
// `helm template` do (deploy/test/render): the overlays, the overlay with
// every component, and the chart with its defaults and each toggle that
// adds grants.
func TestRenderedInstallsGrantExactlyTheDeclaredRules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds deploy/test/render (Helm as a library)")
	}
	render := renderTool(t)
	p := app.Permissions()
	lease := daemon.Permissions.Read.RBACLines()
	agent := app.AgentPermissions()
	records := []string{"config.fleet.records.bucket=records", "config.fleet.records.account=123456789012",
		"config.fleet.records.region=us-east-1"}
	recordsDeleter := state.Permissions.All().RBACLines()
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"kustomize-cronjob", []string{"kustomize", "../overlays/cronjob"}, p.Read.RBACLines()},
		{"kustomize-daemon", []string{"kustomize", "../overlays/daemon"}, append(p.Read.RBACLines(), lease...)},
		{"kustomize-components", []string{"kustomize", "testdata/kustomize-all"}, p.All().RBACLines()},
		{"helm-defaults", helmArgs(), p.Read.RBACLines()},
		{"helm-daemon", helmArgs("mode=daemon"), append(p.Read.RBACLines(), lease...)},
		{"helm-deletePVCs", helmArgs("rbac.deletePVCs=true"), append(p.Read.RBACLines(), k8spvc.Permissions.Delete.RBACLines()...)},
		{"helm-everything", helmArgs("mode=daemon", "rbac.deletePVCs=true", "rbac.deleteWorkloads=true"),
			append(p.All().RBACLines(), lease...)},
		// Agents: reads only, until apply; then the deletes each toggle asks for.
		{"kustomize-agent", []string{"kustomize", "../overlays/agent"}, agent.Read.RBACLines()},
		{"kustomize-agent-apply", []string{"kustomize", "testdata/kustomize-agent-apply"}, agent.All().RBACLines()},
		{"kustomize-agent-watch", []string{"kustomize", "testdata/kustomize-agent-watch"}, app.WatchingAgentPermissions().Read.RBACLines()},
		{"helm-agent", helmArgs("mode=agent", "rbac.deletePVCs=true", "rbac.deleteWorkloads=true"), agent.Read.RBACLines()},
		{"helm-agent-watch", helmArgs("mode=agent", "agent.watch=true"), app.WatchingAgentPermissions().Read.RBACLines()},
		{"helm-agent-apply-workloads", helmArgs("mode=agent", "apply=true", "rbac.deleteWorkloads=true"),
			append(agent.Read.RBACLines(), perms.Union(k8sjob.Permissions, k8spod.Permissions).Delete.RBACLines()...)},
		{"helm-agent-apply", helmArgs("mode=agent", "apply=true", "rbac.deletePVCs=true", "rbac.deleteWorkloads=true"), agent.All().RBACLines()},
		// A deleter reading the agents' records: its state, its Lease, no
		// cluster read and no delete, whatever the toggles.
		{"helm-records-deleter", helmArgs(append(records, "mode=daemon", "rbac.deletePVCs=true", "rbac.deleteWorkloads=true")...),
			append(recordsDeleter, lease...)},
		{"kustomize-records-deleter", []string{"kustomize", "testdata/kustomize-records"}, append(recordsDeleter, lease...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			cmd := exec.Command(render, args...)
			cmd.Dir = filepath.Join(repoRoot(t), "deploy", "test")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("render %v: %v\n%s", args, err, stderr.Bytes())
			}
			sameGrants(t, "the "+c.name+" install", rbacLines(t, out), c.want)
		})
	}
}

// helmArgs render the chart with sets (--set k=v).
func helmArgs(sets ...string) []string {
	args := []string{"helm", "../helm/reclaim"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

// sameGrants reports, in deploy/'s terms, what file grants that nothing
// declares and what is declared that file does not grant.
func sameGrants(t *testing.T, file string, granted, declared []string) {
	t.Helper()
	missing, extra := perms.Diff(declared, granted)
	for _, x := range missing {
		t.Errorf("%s does not grant %s, which the kinds and reads declare", file, x)
	}
	for _, x := range extra {
		t.Errorf("%s grants %s, which no kind or read declares", file, x)
	}
}

// iamActions are the actions a policy's Allow statements name.
func iamActions(t *testing.T, file string) []string {
	t.Helper()
	var doc struct {
		Statement []struct {
			Effect string
			Action json.RawMessage
		}
	}
	if err := json.Unmarshal(read(t, file), &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []string
	for _, s := range doc.Statement {
		if s.Effect != "Allow" {
			t.Fatalf("%s: a statement with Effect %q (only Allow is compared)", file, s.Effect)
		}
		var one string
		var many []string
		if json.Unmarshal(s.Action, &one) == nil {
			many = []string{one}
		} else if err := json.Unmarshal(s.Action, &many); err != nil {
			t.Fatalf("%s: Action: %v", file, err)
		}
		out = append(out, many...)
	}
	return out
}

// gcpPermissions are a custom role's includedPermissions.
func gcpPermissions(t *testing.T, file string) []string {
	t.Helper()
	var role struct {
		IncludedPermissions []string `json:"includedPermissions"`
	}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(read(t, file)), 4096).Decode(&role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return role.IncludedPermissions
}

// rbacLines are the verbs on resources of every Role and ClusterRole in
// a YAML stream, as perms.Set.RBACLines writes them.
func rbacLines(t *testing.T, yaml []byte) []string {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(yaml), 4096)
	var out []string
	for {
		var obj struct {
			Kind  string `json:"kind"`
			Rules []struct {
				APIGroups []string `json:"apiGroups"`
				Resources []string `json:"resources"`
				Verbs     []string `json:"verbs"`
			} `json:"rules"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "Role" && obj.Kind != "ClusterRole" {
			continue
		}
		for _, r := range obj.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						out = append(out, perms.Line(g, res, v))
					}
				}
			}
		}
	}
}

func read(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func repoRoot(t *testing.T) string {
	t.Helper()
	// The test runs in internal/app.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// renderTool builds deploy/test/render (its own module: Helm stays out of
// reclaim's go.mod; `make testbins` builds it ahead, so this is a link).
func renderTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "render")
	cmd := exec.Command("go", "build", "-o", bin, "./render")
	cmd.Dir = filepath.Join(repoRoot(t), "deploy", "test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building deploy/test/render: %v\n%s", err, out)
	}
	return bin
}
