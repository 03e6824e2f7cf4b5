// Package e2e runs reclaim end to end: two real kube-apiservers with etcd as two
// clusters, the wire-level GCE fake driven by the real compute client, and the
// real reclaim code paths from a YAML config to the audit log.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
	"reclaim.dev/reclaim/providers/fakeapi"
)

var (
	prodA, prodB *testenv.Cluster
	reclaimBin   string // the built binary, for tests that kill a process
	binDir       string // where TestMain built it; removed when the tests end
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// `make test` clears the environment (PODENV in the Makefile); in CI
	// that is required, so that a green run means the pod would work.
	for _, k := range machineOnly {
		if v, ok := os.LookupEnv(k); ok {
			if os.Getenv("CI") != "" {
				fmt.Fprintf(os.Stderr, "e2e: %s=%s is set: CI runs the suite with a pod's environment (make test)\n", k, v)
				return 1
			}
			fmt.Fprintf(os.Stderr, "e2e: warning: %s is set; make test runs without it, as a pod does\n", k)
		}
	}
	start := time.Now()
	// The ECR client's credential chain: made-up static keys, and no shared
	// config or instance metadata from the machine running the tests.
	awsDir, err := os.MkdirTemp("", "reclaim-e2e-aws-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(awsDir)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDE2ETEST", "AWS_SECRET_ACCESS_KEY": "e2e-secret",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": filepath.Join(awsDir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(awsDir, "credentials"), "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_ECR": ""} {
		os.Setenv(k, v)
	}
	// Discovery lists each account's enabled regions (ec2 DescribeRegions)
	// from its first fleet.eks region: the account of every world has
	// exactly the region it is listed from, unless a test says otherwise.
	regions := fakeapi.NewRegions(map[string]http.Handler{})
	defer regions.Close()
	for _, r := range []string{"us-east-1", "us-west-2", "eu-west-1"} {
		regions.Set(r, ec2fake.New(ec2fake.Options{Account: account, Region: r}))
	}
	os.Setenv("AWS_ENDPOINT_URL_EC2", regions.URL())
	// Discovery asks STS who it is before a listing counts for an
	// account: the test's keys are the account's.
	whoami := stsfake.New(stsfake.Identity{AccessKeyID: "AKIDE2ETEST", SecretAccessKey: "e2e-secret",
		ARN: "arn:aws:sts::" + account + ":assumed-role/reclaim/reclaim", Account: account, UserID: "AROAE2E:reclaim"})
	whoami.Start()
	defer whoami.Close()
	os.Setenv("AWS_ENDPOINT_URL_STS", whoami.URL())
	cs, err := testenv.StartClusters(ctx, "prod-a", "prod-b")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start clusters:", err)
		return 1
	}
	defer func() {
		for _, c := range cs {
			c.Stop()
		}
	}()
	prodA, prodB = cs[0], cs[1]
	if err := prodA.InstallWorkflowCRD(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: install Workflow CRD:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "reclaim-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	reclaimBin = filepath.Join(dir, "reclaim")
	if err := testenv.BuildReclaim(ctx, reclaimBin); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build reclaim:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: two clusters up and reclaim built in %s\n", time.Since(start).Round(time.Millisecond))
	code := m.Run()
	if code == 0 {
		// Every call reclaim made through the wire fakes is declared by a
		// kind or read (base/perms), so deploy/ grants it.
		code = fakeapi.CheckSeen(os.Stdout, app.Permissions().Cloud())
	}
	return code
}

// reclaimCmd is the built binary as the container of m runs it
// (testenv.Pod): the manifest's environment, the test's AWS credentials,
// then env.
func reclaimCmd(ctx context.Context, t testing.TB, m testenv.Manifest, env []string, args ...string) *exec.Cmd {
	t.Helper()
	return reclaimPod(ctx, t, testenv.Pod{Manifest: m, Env: env}, args...)
}

// reclaimPod is reclaimCmd with the whole Pod given; the test's AWS
// credentials come before p.Env.
func reclaimPod(ctx context.Context, t testing.TB, p testenv.Pod, args ...string) *exec.Cmd {
	t.Helper()
	creds := []string{"AWS_ACCESS_KEY_ID=" + os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY=" + os.Getenv("AWS_SECRET_ACCESS_KEY"),
		"AWS_CONFIG_FILE=" + os.Getenv("AWS_CONFIG_FILE"), "AWS_SHARED_CREDENTIALS_FILE=" + os.Getenv("AWS_SHARED_CREDENTIALS_FILE")}
	p.Env = append(creds, p.Env...)
	return p.Command(ctx, t, reclaimBin, args...)
}

// machineOnly are variables a development machine or CI exports and a pod
// has not: in-process tests that saw them could pass where the pod fails.
var machineOnly = []string{"AWS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "KUBECONFIG", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_PROFILE"}
