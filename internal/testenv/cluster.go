package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// AdminUser is the user behind Cluster.Admin; it is in system:masters.
	AdminUser = "reclaim-admin"
	// RestrictedUser is the user behind Cluster.Restricted; it has no groups
	// beyond system:authenticated and therefore no permissions until Grant.
	RestrictedUser = "reclaim-restricted"
	// EnvKeep, when set to a non-empty value other than "0", keeps Cluster.Dir after Stop.
	EnvKeep = "RECLAIM_TESTENV_KEEP"
)

// Options tunes StartCluster. The zero value is what tests normally want.
type Options struct {
	// ReadyTimeout bounds the wait for etcd and kube-apiserver to become
	// ready. Default 60s.
	ReadyTimeout time.Duration
	// BaseDir is where the cluster's temporary directory is created.
	// Default os.TempDir().
	BaseDir string
	// ExtraEtcdArgs and ExtraAPIServerArgs are appended to the generated
	// command lines (for scalar flags the last occurrence wins).
	ExtraEtcdArgs      []string
	ExtraAPIServerArgs []string
	// KeepDir keeps Dir (data, certs, logs, kubeconfig) after Stop. Also
	// enabled by RECLAIM_TESTENV_KEEP=1.
	KeepDir bool
	// Authenticate, if set, is asked (through a token webhook) about every
	// bearer token the cluster's own token file does not know: how a test
	// stands in for EKS's or GKE's authenticator.
	Authenticate Authenticator
}

// Cluster is one running etcd + kube-apiserver pair.
type Cluster struct {
	Name string
	// Dir holds everything of this cluster: etcd data, apiserver certs,
	// etcd.log, kube-apiserver.log, the token file and the kubeconfig.
	Dir string
	// URL is the apiserver's https://127.0.0.1:<port>.
	URL string
	// EtcdURL is etcd's client URL, http://127.0.0.1:<port>.
	EtcdURL string
	// Admin is a system:masters config; treat it as read-only (use
	// rest.CopyConfig before modifying it).
	Admin *rest.Config
	// Kubeconfig is the path of a kubeconfig with contexts "admin" (the
	// current one) and "restricted", trusting the apiserver's self-signed CA.
	Kubeconfig string
	// CAData is the PEM the apiserver wrote to <cert-dir>/apiserver.crt.
	CAData []byte

	// Client and Dynamic are admin clients built from Admin.
	Client  kubernetes.Interface
	Dynamic dynamic.Interface

	restrictedToken string
	etcd, apiserver *process
	webhook         interface{ Close() }
	keep            bool
	stopOnce        sync.Once
}

// Restricted returns a fresh config authenticating as RestrictedUser.
func (c *Cluster) Restricted() *rest.Config {
	cfg := rest.CopyConfig(c.Admin)
	cfg.BearerToken = c.restrictedToken
	return cfg
}

// APIServerLog and EtcdLog return the paths of the processes' combined
// stdout/stderr logs (gone after Stop unless KeepDir).
func (c *Cluster) APIServerLog() string { return c.apiserver.logPath }
func (c *Cluster) EtcdLog() string      { return c.etcd.logPath }

// Stop kills kube-apiserver and etcd and removes Dir. It is idempotent and
// safe to call concurrently.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.apiserver.kill()
		c.etcd.kill()
		if c.webhook != nil {
			c.webhook.Close()
		}
		if !c.keep {
			_ = os.RemoveAll(c.Dir)
		}
	})
}

// StartClusters starts one cluster per name concurrently with default
// Options. On error every cluster that did start is stopped.
func StartClusters(ctx context.Context, names ...string) ([]*Cluster, error) {
	clusters := make([]*Cluster, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clusters[i], errs[i] = StartCluster(ctx, name, Options{})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range clusters {
			if c != nil {
				c.Stop()
			}
		}
		return nil, err
	}
	return clusters, nil
}

// StartCluster starts etcd and kube-apiserver on free loopback ports and
// waits until /readyz succeeds. ctx bounds only the start; the processes run
// until Stop or until the test process exits.
func StartCluster(ctx context.Context, name string, opts Options) (*Cluster, error) {
	etcdBin, apiserverBin, err := Binaries()
	if err != nil {
		return nil, err
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	// Free ports are found by binding :0 and closing, so another process can
	// grab one before we use it. Such a start fails fast with "address
	// already in use"; retry it with new ports.
	for attempt := 1; ; attempt++ {
		c, err := startCluster(ctx, name, opts, etcdBin, apiserverBin)
		if err == nil || attempt == 3 || !errors.Is(err, errPortInUse) || ctx.Err() != nil {
			return c, err
		}
	}
}

var errPortInUse = errors.New("port already in use")

func startCluster(ctx context.Context, name string, opts Options, etcdBin, apiserverBin string) (_ *Cluster, err error) {
	ctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()

	dir, err := os.MkdirTemp(opts.BaseDir, "reclaim-testenv-"+safeName(name)+"-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, Dir: dir, keep: opts.KeepDir || keepFromEnv()}
	defer func() {
		if err != nil {
			err = fmt.Errorf("testenv: starting cluster %q (dir %s): %w", name, dir, err)
			c.Stop()
		}
	}()
	c.etcd = &process{name: "etcd", logPath: filepath.Join(dir, "etcd.log")}
	c.apiserver = &process{name: "kube-apiserver", logPath: filepath.Join(dir, "kube-apiserver.log")}

	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	clientPort, peerPort, securePort := ports[0], ports[1], ports[2]

	// etcd
	c.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcdName := "testenv"
	etcdArgs := []string{
		"--name=" + etcdName,
		"--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=" + c.EtcdURL,
		"--advertise-client-urls=" + c.EtcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + etcdName + "=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=" + strconv.Itoa(256<<20),
		"--snapshot-count=10000",
		"--log-level=warn",
	}
	if err := c.etcd.start(etcdBin, append(etcdArgs, opts.ExtraEtcdArgs...)); err != nil {
		return c, err
	}

	// Credentials, written while etcd starts.
	adminToken, restrictedToken := randomToken(), randomToken()
	c.restrictedToken = restrictedToken
	tokenFile := filepath.Join(dir, "tokens.csv")
	tokens := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n%s,%s,%s\n",
		adminToken, AdminUser, AdminUser, restrictedToken, RestrictedUser, RestrictedUser)
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		return c, err
	}
	keyPEM, err := serviceAccountKey()
	if err != nil {
		return c, err
	}
	saKeyFile := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(saKeyFile, keyPEM, 0o600); err != nil {
		return c, err
	}
	certDir := filepath.Join(dir, "certs")

	// kube-apiserver. It is started without waiting for etcd: its storage
	// client retries, and both spend their first second initializing.
	c.URL = "https://127.0.0.1:" + strconv.Itoa(securePort)
	apiArgs := []string{
		"--etcd-servers=" + c.EtcdURL,
		"--bind-address=127.0.0.1",
		// Without it the apiserver advertises (and puts in its self-signed
		// cert) the host's default interface address, not loopback.
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKeyFile,
		"--service-account-signing-key-file=" + saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// No controller-manager creates default service accounts, so the
		// ServiceAccount plugin would reject every pod.
		"--disable-admission-plugins=ServiceAccount",
		// The lease reconciler would try to publish 127.0.0.1 as the
		// kubernetes service's endpoint, which validation rejects (loopback).
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
	if opts.Authenticate != nil {
		wh := tokenWebhook(opts.Authenticate)
		c.webhook = wh
		args, err := webhookArgs(dir, wh.URL)
		if err != nil {
			return c, err
		}
		apiArgs = append(apiArgs, args...)
	}
	if err := c.apiserver.start(apiserverBin, append(apiArgs, opts.ExtraAPIServerArgs...)); err != nil {
		return c, err
	}
	if err := waitHTTP(ctx, c.etcd, nil, c.EtcdURL+"/health", ""); err != nil {
		return c, err
	}
	insecure := &tls.Config{InsecureSkipVerify: true} // only until the cert is known; /readyz carries nothing secret
	if err := waitHTTP(ctx, c.apiserver, insecure, c.URL+"/readyz", adminToken); err != nil {
		return c, err
	}

	if c.CAData, err = os.ReadFile(filepath.Join(certDir, "apiserver.crt")); err != nil {
		return c, err
	}
	c.Admin = &rest.Config{
		Host:            c.URL,
		BearerToken:     adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData},
		QPS:             200,
		Burst:           400,
		Timeout:         30 * time.Second,
	}
	if c.Client, err = kubernetes.NewForConfig(c.Admin); err != nil {
		return c, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Admin); err != nil {
		return c, err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, name, c.URL, c.CAData, false, map[string]string{
		"admin":      adminToken,
		"restricted": restrictedToken,
	}, "admin"); err != nil {
		return c, err
	}
	return c, nil
}

// process is one child with its log file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done
}

func (p *process) start(bin string, args []string) error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logFile, "+ %s %s\n", bin, strings.Join(args, " "))
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile // *os.File: no copying goroutines
	setPdeathsig(p.cmd)
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("%s: %w", p.name, err)
	}
	logFile.Close() // the child holds its own descriptor
	p.done = make(chan struct{})
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return nil
}

func (p *process) kill() {
	if p == nil || p.done == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitError describes an early exit, with the tail of the log.
func (p *process) exitError() error {
	tail := logTail(p.logPath, 40)
	err := fmt.Errorf("%s exited during start: %v; last lines of %s:\n%s", p.name, p.waitErr, filepath.Base(p.logPath), tail)
	if strings.Contains(tail, "address already in use") {
		err = fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// waitHTTP polls url until it answers 200, the process exits, or ctx ends.
func waitHTTP(ctx context.Context, p *process, tlsConfig *tls.Config, url, token string) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	var last string
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w (last answer: %s); last lines of %s:\n%s",
				p.name, url, ctx.Err(), last, filepath.Base(p.logPath), logTail(p.logPath, 40))
		case <-tick.C:
		}
	}
}

// logTail returns the last n lines of the file (from its last 16 KiB).
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(-max, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var (
	portMu    sync.Mutex
	usedPorts = map[int]bool{} // handed out by this process; never handed out twice
)

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	portMu.Lock()
	defer portMu.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100 {
			return nil, errors.New("no free loopback ports")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !usedPorts[port] {
			usedPorts[port] = true
			ports = append(ports, port)
		}
	}
	return ports, nil
}

var (
	saKeyOnce sync.Once
	saKeyPEM  []byte
	saKeyErr  error
)

// serviceAccountKey returns a PEM RSA key, generated once per process (the
// clusters are independent, sharing a signing key between them is harmless).
func serviceAccountKey() ([]byte, error) {
	saKeyOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			saKeyErr = err
			return
		}
		saKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	})
	return saKeyPEM, saKeyErr
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func safeName(name string) string {
	s := unsafeChars.ReplaceAllString(name, "_")
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

func keepFromEnv() bool {
	v := os.Getenv(EnvKeep)
	return v != "" && v != "0" && v != "false"
}
