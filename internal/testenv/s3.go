package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// S3ServerBin is the S3 the agent tests publish to (testbins/s3server:
// gofakes3 behind a stand-in for IAM).
const S3ServerBin = "s3server"

// S3Grant is what one access key may do in an S3Server: read (get, head,
// list) and write (put, delete) objects under "bucket/prefix" prefixes.
type S3Grant struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// S3Server is a running s3server.
type S3Server struct {
	// URL is its endpoint, path-style (http://127.0.0.1:PORT).
	URL string
	// Clock is the time it stamps objects with.
	Clock StoreClock
	proc  *process
}

// StartS3 starts an s3server with buckets, its log under dir. With a
// policy, each access key may only do what its grant says (others get
// AccessDenied); without one, everything is allowed. It is killed by Stop,
// or when the test process exits.
func StartS3(ctx context.Context, dir string, policy map[string]S3Grant, buckets ...string) (*S3Server, error) {
	clock := StoreClock{file: filepath.Join(dir, "s3-clock")}
	args := []string{"-buckets", strings.Join(buckets, ","), "-clock", clock.file}
	if policy != nil {
		raw, err := json.Marshal(policy)
		if err != nil {
			return nil, err
		}
		f := filepath.Join(dir, "s3-policy.json")
		if err := os.WriteFile(f, raw, 0o600); err != nil {
			return nil, err
		}
		args = append(args, "-policy", f)
	}
	u, p, err := startServing(ctx, S3ServerBin, filepath.Join(dir, "s3server.log"), args...)
	if err != nil {
		return nil, err
	}
	return &S3Server{URL: u, Clock: clock, proc: p}, nil
}

// startServing starts the test binary name with args, its stderr to
// logPath, and waits for the URL it prints on its first line.
func startServing(ctx context.Context, name, logPath string, args ...string) (string, *process, error) {
	bin, err := toolBinary(name)
	if err != nil {
		return "", nil, err
	}
	p := &process{name: name, logPath: logPath}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", nil, err
	}
	defer logFile.Close()
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = logFile
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	setPdeathsig(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	p.done = make(chan struct{})
	url := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		url <- strings.TrimSpace(line)
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case u := <-url:
		if !strings.HasPrefix(u, "http://") {
			p.kill()
			return "", nil, p.exitError()
		}
		return u, p, nil
	case <-ctx.Done():
		p.kill()
		return "", nil, ctx.Err()
	case <-time.After(30 * time.Second):
		p.kill()
		return "", nil, fmt.Errorf("%s did not print its URL within 30s; log %s", name, p.logPath)
	}
}

// Stop kills the server.
func (s *S3Server) Stop() { s.proc.kill() }
