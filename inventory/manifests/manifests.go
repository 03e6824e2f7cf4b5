// Package manifests reads a directory of Kubernetes manifests (a GitOps
// checkout: plain YAML or JSON, kustomizations, Helm charts) and returns
// every ECR image reference in it, as an inventory.ImageSource.
package manifests

import (
	"regexp"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"reclaim.dev/reclaim/base/glob"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
)

// Options controls one read.
type Options struct {
	// Exclude are globs (base/glob: * within a segment, ** across) of slash-separated paths relative
	// to the directory, to skip: a matching directory is skipped whole. A
	// pattern without a slash also matches any file or directory by its base
	// name (".github", "*.schema.json").
	Exclude []string
}

// Read walks dir for .yaml, .yml and .json files (and kustomize's
// Kustomization), splits multi-document YAML, and collects every image a
// document asks a kubelet to pull (see imageref.WalkImages: any containers,
// initContainers or ephemeralContainers list at any depth, image volumes,
// Argo templates), the effective image of every kustomize images: entry
// (kustomization files, Flux Kustomizations, Argo CD kustomize.images), and
// any other string that names an ECR repository (Helm values: repository
// with tag, or registry with repository and tag). A document that does not
// decode (a Helm template) is scanned as text for ECR references instead.
// A file or directory that cannot be read makes the source incomplete.
// Uses are deduplicated: one per distinct reference, Where the smallest
// "manifests:PATH", Users the number of occurrences.
func Read(ctx context.Context, dir string, opt Options) inventory.ImageSource {
	w := &walk{ctx: ctx, dir: dir, set: imageref.NewSet(), out: inventory.ImageSource{Name: "manifests:" + dir, Complete: true}}
	w.compileExcludes(opt.Exclude)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		w.fail("manifests %s: %v", dir, err)
		return w.out
	case !st.IsDir():
		w.fail("manifests %s: not a directory", dir)
		return w.out
	}
	if err := filepath.WalkDir(dir, w.visit); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			w.fail("manifests %s: stopped before the end (%v)", dir, context.Cause(ctx))
		} else {
			w.fail("manifests %s: %v", dir, err)
		}
	}
	w.out.Images = w.set.Uses()
	return w.out
}

// walk is one Read of a directory.
type walk struct {
	ctx      context.Context
	dir      string
	excludes []exclude
	set      *imageref.Set
	out      inventory.ImageSource
}

// fail makes the source incomplete, saying why.
func (w *walk) fail(format string, a ...any) {
	w.out.Complete = false
	w.out.Problems = append(w.out.Problems, fmt.Sprintf(format, a...))
}

// compileExcludes compiles the exclude globs; a bad one excludes nothing
// and is a problem that leaves the source complete.
func (w *walk) compileExcludes(patterns []string) {
	for _, p := range patterns {
		re, err := glob.Compile(p)
		if err != nil {
			w.out.Problems = append(w.out.Problems, fmt.Sprintf("exclude pattern %q: %v (it excludes nothing)", p, err))
			continue
		}
		w.excludes = append(w.excludes, exclude{re: re, base: !strings.Contains(p, "/")})
	}
}

// visit reads one file of the walk (filepath.WalkDirFunc), skipping what
// is excluded and .git.
func (w *walk) visit(p string, d fs.DirEntry, err error) error {
	if cerr := w.ctx.Err(); cerr != nil {
		return cerr
	}
	rel, rerr := filepath.Rel(w.dir, p)
	if rerr != nil {
		rel = p
	}
	rel = filepath.ToSlash(rel)
	if err != nil {
		w.fail("manifests %s: cannot read %s: %v", w.dir, rel, unwrapPath(err))
		return nil // WalkDir skips the unreadable directory and goes on
	}
	if rel == "." {
		return nil
	}
	if excluded(rel, w.excludes) {
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	if d.IsDir() {
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		return nil
	}
	if !w.regular(p, d, rel) || !wanted(d.Name()) {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		w.fail("manifests %s: cannot read %s: %v", w.dir, rel, unwrapPath(err))
		return nil
	}
	w.out.Files++
	readFile(w.set, "manifests:"+rel, strings.EqualFold(filepath.Ext(p), ".json"), data)
	return nil
}

// regular says whether p is a regular file, or a symbolic link to one; a
// link to a directory is not followed, and says so.
func (w *walk) regular(p string, d fs.DirEntry, rel string) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.Type().IsRegular()
	}
	fi, err := os.Stat(p)
	if err != nil {
		if wanted(d.Name()) {
			w.fail("manifests %s: cannot read %s: %v", w.dir, rel, unwrapPath(err))
		}
		return false
	}
	if fi.IsDir() {
		w.fail("manifests %s: %s is a symbolic link to a directory, which is not followed; add it to exclude, or list its target as a manifests directory of its own", w.dir, rel)
		return false
	}
	return fi.Mode().IsRegular()
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// wanted reports whether a file name is a manifest.
func wanted(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return name == "Kustomization"
}

// exclude is a compiled exclude glob; one without a slash also matches a base name.
type exclude struct {
	re   *regexp.Regexp
	base bool
}

func excluded(rel string, patterns []exclude) bool {
	base := path.Base(rel)
	for _, p := range patterns {
		if p.re.MatchString(rel) || p.base && p.re.MatchString(base) {
			return true
		}
	}
	return false
}

// readFile records the references of one file's documents.
func readFile(set *imageref.Set, where string, isJSON bool, data []byte) {
	if isJSON {
		readDoc(set, where, data)
		return
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	read := 0
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			// Cannot split further: scan what is left as text.
			scan(set, where, data[min(read, len(data)):])
			return
		}
		read += len(doc)
		readDoc(set, where, doc)
	}
}

func readDoc(set *imageref.Set, where string, doc []byte) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return
	}
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		scan(set, where, doc)
		return
	}
	if v != nil {
		walkDoc(set, where, v)
	}
}

// scan records the ECR references in a document that does not decode.
func scan(set *imageref.Set, where string, text []byte) {
	for _, u := range imageref.Find(string(text)) {
		set.Put(u.Ref, where, u.Problem)
	}
}
