package manifests

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/inventory"
)

const (
	acct = "123456789012"
	host = acct + ".dkr.ecr.us-east-1.amazonaws.com"
	dgst = "sha256:65e409ae5b2d553181bd086cc59aaaaa19c9b5b6e9aadd3c7b8122606f03744a"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "ECR", host)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// key is a compact form of a use: account|region|repo|tag|digest|where|users[|problem].
func key(u inventory.ImageUse) string {
	r := u.Ref
	s := strings.Join([]string{r.Repo.Account, r.Repo.Region, r.Repo.Name, r.Tag, r.Digest, u.Where, strconv.Itoa(u.Users)}, "|")
	if u.Problem != "" {
		s += "|problem"
	}
	return s
}

var files = map[string]string{
	"apps/web.yaml": `# a multi-document file
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: ECR/web-migrate:7
      containers:
        - name: web
          image: ECR/web:2.0
        - name: sidecar
          image: envoyproxy/envoy:v1.30
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: job
              image: "ECR/ecr-public/nginx/nginx:1.27"
          volumes:
            - name: models
              image: {reference: "ECR/models:v3"}
---
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  containers: [{name: main, image: "ECR/web:2.0"}]
  ephemeralContainers: [{name: dbg, image: "ECR/debug@` + dgst + `"}]
`,
	"apps/list.json": `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"template":{"spec":{"containers":[{"name":"db","image":"ECR/db:14"}]}}}}]}`,
	"argo/wf.yml": `apiVersion: argoproj.io/v1alpha1
kind: Workflow
spec:
  templates:
    - name: main
      container: {image: "ECR/argo-main:1"}
    - name: s
      script: {image: "ECR/argo-script:1", source: "echo"}
`,
	"charts/app/templates/deployment.yaml": `{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: app
          image: "ECR/chart-app:{{ .Values.image.tag | default .Chart.AppVersion }}"
        - name: fixed
          image: ECR/chart-fixed:1.0
        - name: any
          image: "ECR/{{ .Values.name }}:1"
        - name: elsewhere
          image: "{{ .Values.registry }}/x:1"
{{- end }}
`,
	"charts/app/values.yaml": `image:
  repository: ECR/values-app
  tag: "1.2.0"
sidecar:
  registry: ECR
  repository: team/sidecar
  tag: v9
bare:
  repository: ECR/values-bare
env:
  REGISTRY: ECR
`,
	"overlays/prod/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../../apps]
images:
  - name: ECR/web
    newTag: "2.1"
  - name: busybox
    newName: ECR/mirror/busybox
    digest: ` + dgst + `
  - name: ECR/renamed
    newName: ECR/renamed-new
  - name: ECR/numeric
    newTag: 1.20
  - name: ECR/replaced
    newName: quay.io/other/image
    newTag: "5"
`,
	"argocd/app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
spec:
  source:
    kustomize:
      images: ["ECR/argocd-img:3", "old/name=ECR/argocd-new:4"]
`,
	"README.md":                 "image: ECR/readme:1\n",
	".git/config.yaml":          "image: ECR/git:1\n",
	"vendor/skip.yaml":          "containers: [{image: ECR/vendored:1}]\n",
	"apps/skipme.skip.yaml":     "containers: [{image: ECR/skipped:1}]\n",
	"apps/empty.yaml":           "---\n---\n",
	"apps/nested/Kustomization": "images: [{name: ECR/nested, newTag: n1}]\n",
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, files)
	src := Read(context.Background(), dir, Options{Exclude: []string{"vendor", "*.skip.yaml"}})
	if !src.Complete || len(src.Problems) != 0 {
		t.Fatalf("complete=%v problems=%q", src.Complete, src.Problems)
	}
	if src.Name != "manifests:"+dir {
		t.Fatalf("name %q", src.Name)
	}
	// web.yaml, list.json, wf.yml, deployment.yaml, values.yaml,
	// kustomization.yaml, app.yaml, empty.yaml, Kustomization.
	if src.Files != 9 {
		t.Fatalf("files %d, want 9", src.Files)
	}
	e := acct + "|us-east-1|"
	want := []string{
		e + "argo-main|1||manifests:argo/wf.yml|1",
		e + "argo-script|1||manifests:argo/wf.yml|1",
		e + "argocd-img|3||manifests:argocd/app.yaml|1",
		e + "argocd-new|4||manifests:argocd/app.yaml|1",
		e + "chart-app|||manifests:charts/app/templates/deployment.yaml|1|problem",
		e + "chart-fixed|1.0||manifests:charts/app/templates/deployment.yaml|1",
		e + "db|14||manifests:apps/list.json|1",
		e + "debug||" + dgst + "|manifests:apps/web.yaml|1",
		e + "ecr-public/nginx/nginx|1.27||manifests:apps/web.yaml|1",
		e + "mirror/busybox||" + dgst + "|manifests:overlays/prod/kustomization.yaml|1",
		e + "models|v3||manifests:apps/web.yaml|1",
		e + "nested|n1||manifests:apps/nested/Kustomization|1",
		e + "numeric|||manifests:overlays/prod/kustomization.yaml|1|problem",
		e + "renamed-new|||manifests:overlays/prod/kustomization.yaml|1|problem",
		e + "team/sidecar|v9||manifests:charts/app/values.yaml|1",
		e + "values-app|1.2.0||manifests:charts/app/values.yaml|1",
		e + "values-bare|||manifests:charts/app/values.yaml|1|problem",
		e + "web|2.0||manifests:apps/web.yaml|2",
		e + "web|2.1||manifests:overlays/prod/kustomization.yaml|1",
		e + "web-migrate|7||manifests:apps/web.yaml|1",
		// The template's repository is unknown: the whole registry.
		e + "|||manifests:charts/app/templates/deployment.yaml|1|problem",
	}
	var got []string
	for _, u := range src.Images {
		got = append(got, key(u))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, u := range src.Images {
		if u.Problem != "" && (u.Ref.Tag != "" || u.Ref.Digest != "") {
			t.Errorf("loose use with a tag or digest: %+v", u)
		}
	}
}

// The Helm template above does not decode as YAML: it is read as text.
func TestHelmTemplateIsText(t *testing.T) {
	var v any
	if err := yaml.Unmarshal([]byte(files["charts/app/templates/deployment.yaml"]), &v); err == nil {
		t.Fatalf("the Helm template decodes (%v); the test does not cover the text fallback", v)
	}
}

func TestReadDeterministicWhere(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"b.yaml":     "containers: [{image: ECR/app:1}]\n",
		"a/z.yaml":   "containers: [{image: ECR/app:1}]\n",
		"a/y.json":   `{"initContainers":[{"image":"ECR/app:1"}]}`,
		"c/d/e.yaml": "containers: [{image: ECR/app:1}, {image: ECR/app:1}]\n",
	})
	src := Read(context.Background(), dir, Options{})
	if len(src.Images) != 1 || src.Images[0].Where != "manifests:a/y.json" || src.Images[0].Users != 5 {
		t.Fatalf("%+v", src.Images)
	}
}

func TestReadProblems(t *testing.T) {
	t.Run("missing dir", func(t *testing.T) {
		src := Read(context.Background(), filepath.Join(t.TempDir(), "nope"), Options{})
		if src.Complete || len(src.Problems) != 1 || !strings.Contains(src.Problems[0], "no such file") {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("not a dir", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f.yaml")
		write(t, filepath.Dir(f), map[string]string{"f.yaml": "a: b"})
		if src := Read(context.Background(), f, Options{}); src.Complete {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("dangling symlink", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"ok.yaml": "containers: [{image: ECR/ok:1}]\n"})
		if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
			t.Fatal(err)
		}
		src := Read(context.Background(), dir, Options{})
		if src.Complete || len(src.Problems) != 1 || !strings.Contains(src.Problems[0], "cannot read link.yaml") || len(src.Images) != 1 || src.Files != 1 {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("symlinked dir", func(t *testing.T) {
		dir, other := t.TempDir(), t.TempDir()
		write(t, other, map[string]string{"x.yaml": "containers: [{image: ECR/x:1}]\n"})
		if err := os.Symlink(other, filepath.Join(dir, "shared")); err != nil {
			t.Fatal(err)
		}
		src := Read(context.Background(), dir, Options{})
		if src.Complete || len(src.Problems) != 1 || !strings.Contains(src.Problems[0], "shared is a symbolic link to a directory") {
			t.Fatalf("%+v", src)
		}
		// Excluding it is the fix.
		if src := Read(context.Background(), dir, Options{Exclude: []string{"shared"}}); !src.Complete {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads everything")
		}
		dir := t.TempDir()
		write(t, dir, map[string]string{"f.yaml": "a: b", "sub/g.yaml": "a: b"})
		if err := os.Chmod(filepath.Join(dir, "f.yaml"), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "sub"), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "sub"), 0o755) })
		src := Read(context.Background(), dir, Options{})
		if src.Complete || len(src.Problems) != 2 {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"f.yaml": "a: b"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if src := Read(ctx, dir, Options{}); src.Complete || len(src.Problems) != 1 {
			t.Fatalf("%+v", src)
		}
	})
	t.Run("bad pattern", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"f.yaml": "a: b"})
		src := Read(context.Background(), dir, Options{Exclude: []string{"[x"}})
		if !src.Complete || len(src.Problems) != 1 || !strings.Contains(src.Problems[0], `exclude pattern "[x"`) {
			t.Fatalf("%+v", src)
		}
	})
}

// Exclude globs mean what the config check says: ** spans directories.
func TestExcludeDoubleStar(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"apps/web.yaml":                    "containers: [{image: ECR/web:1}]\n",
		"apps/charts/x/templates/dep.yaml": "containers: [{image: ECR/chart:1}]\n",
		"charts/top.yaml":                  "containers: [{image: ECR/top:1}]\n",
		"apps/mycharts/keep.yaml":          "containers: [{image: ECR/kept:1}]\n",
	})
	src := Read(context.Background(), dir, Options{Exclude: []string{"**/charts/**"}})
	if !src.Complete || src.Files != 2 {
		t.Fatalf("complete %v, files %d, want 2 (web, mycharts)", src.Complete, src.Files)
	}
}
