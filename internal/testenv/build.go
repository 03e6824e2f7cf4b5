package testenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// BuildReclaim builds cmd/reclaim into out as the Dockerfile builds it: the
// environment and flags of its `go build` line, so that what a test runs is
// what the image ships. tags are added to the Dockerfile's (demo, for
// `reclaim demo`).
func BuildReclaim(ctx context.Context, out string, tags ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	env, flags, err := DockerfileBuild(filepath.Join(root, "Dockerfile"))
	if err != nil {
		return err
	}
	args := append([]string{"build"}, withTags(flags, tags...)...)
	args = append(args, "-o", out, "./cmd/reclaim")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testenv: go %s: %w", strings.Join(args, " "), err)
	}
	return os.Chmod(out, 0o755)
}

// withTags adds tags to the -tags of build flags (a second -tags would
// replace the first), or adds a -tags.
func withTags(flags []string, tags ...string) []string {
	if len(tags) == 0 {
		return flags
	}
	out := slices.Clone(flags)
	for i, f := range out {
		switch {
		case f == "-tags" && i+1 < len(out):
			out[i+1] = strings.Join(append([]string{out[i+1]}, tags...), ",")
			return out
		case strings.HasPrefix(f, "-tags="):
			out[i] = strings.Join(append([]string{f}, tags...), ",")
			return out
		}
	}
	return append(out, "-tags", strings.Join(tags, ","))
}

// DockerfileBuild reads the Dockerfile's `go build` line: the variables it
// sets for the build (GOOS and GOARCH left to this machine) and its flags
// up to -o, with ${VERSION} as "test".
func DockerfileBuild(path string) (env, flags []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("testenv: %w", err)
	}
	defer f.Close()
	var line strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		if line.Len() == 0 && !strings.HasPrefix(t, "RUN ") {
			continue
		}
		line.WriteString(strings.TrimSuffix(t, "\\") + " ")
		if strings.HasSuffix(t, "\\") {
			continue
		}
		if strings.Contains(line.String(), " go build ") {
			break
		}
		line.Reset()
	}
	words, err := shellWords(line.String())
	if err != nil || len(words) == 0 {
		return nil, nil, fmt.Errorf("testenv: %s: no RUN line with go build (%v)", path, err)
	}
	i := 0
	for ; i < len(words) && words[i] != "go"; i++ {
		k, _, ok := strings.Cut(words[i], "=")
		if ok && k != "GOOS" && k != "GOARCH" && !strings.Contains(words[i], "$") {
			env = append(env, words[i])
		}
	}
	if i+1 >= len(words) || words[i+1] != "build" {
		return nil, nil, fmt.Errorf("testenv: %s: the go build line does not start with go build", path)
	}
	for _, w := range words[i+2:] {
		if w == "-o" {
			break
		}
		flags = append(flags, strings.ReplaceAll(w, "${VERSION}", "test"))
	}
	return env, flags, nil
}

// shellWords splits s as sh would, for the quoting a Dockerfile's RUN line
// uses: words, double and single quotes; flags like --mount are skipped.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
