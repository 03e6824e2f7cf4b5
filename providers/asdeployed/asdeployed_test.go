package asdeployed_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/batch/batchfake"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/ecs/ecsfake"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/providers/gke"
	"reclaim.dev/reclaim/providers/gke/gkefake"
	"reclaim.dev/reclaim/providers/lambda"
	"reclaim.dev/reclaim/providers/lambda/lambdafake"
)

// The documented example account, and the test's made-up identities.
const (
	account    = "123456789012"
	region     = "us-east-1"
	project    = "example-project"
	akid       = "AKIDPODEXAMPLE"
	secret     = "pod-example-secret"
	roleARN    = "arn:aws:iam::123456789012:role/reclaim"
	webToken   = "eyJhbGciOiJSUzI1NiJ9.projected-service-account-token.example"
	podIDToken = "pod-identity-agent-token-example"
	gceToken   = "ya29.workload-identity-example"
	recordsKey = "records/pod.json.gz"
	specVar    = "RECLAIM_ASDEPLOYED" // the child's case, as JSON
)

// spec is what the parent hands the child process: which case, and where
// each fake listens.
type spec struct {
	Case string
	URL  map[string]string
	// Want is "" for success, else a piece of the error the case must give.
	Want string
}

// fleet is one of every fake, each serving on 127.0.0.1.
type fleet struct {
	ecr    *ecrfake.Server
	ec2    *ec2fake.Server
	ebs    *ebsfake.Server
	ecs    *ecsfake.Server
	lambda *lambdafake.Server
	batch  *batchfake.Server
	eks    *eksfake.Server
	sts    *stsfake.Server
	s3     *testenv.S3Server
	gce    *gcefake.Server
	gke    *gkefake.Server
	url    map[string]string
	dir    string
	// gceAuth is the Authorization header of the last GCE request.
	gceAuth atomic.Value
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{url: map[string]string{}, dir: t.TempDir()}
	f.ecr = ecrfake.New(ecrfake.Options{Region: region})
	f.ecr.Start()
	f.ecr.AddRepository(account, "shop/api", time.Now().Add(-30*24*time.Hour), nil)
	f.ec2 = ec2fake.New(ec2fake.Options{Region: region, Account: account})
	f.ec2.Start()
	f.ec2.AddSubnet(ec2fake.Subnet{ID: "subnet-0example", CIDR: "10.0.0.0/20"})
	f.ebs = ebsfake.New(ebsfake.Options{Region: region, Account: account})
	f.ebs.Start()
	f.ecs = ecsfake.New(ecsfake.Options{Account: account, Region: region})
	f.ecs.Start()
	f.lambda = lambdafake.New(lambdafake.Options{Account: account, Region: region})
	f.lambda.Start()
	f.batch = batchfake.New(batchfake.Options{Account: account, Region: region})
	f.batch.Start()
	f.eks = eksfake.New(eksfake.Options{Account: account, Region: region})
	f.eks.Start()
	f.sts = stsfake.New(stsfake.Identity{AccessKeyID: akid, SecretAccessKey: secret, Account: account,
		ARN: "arn:aws:iam::123456789012:user/reclaim", UserID: "AIDAEXAMPLE"})
	f.sts.AddRole(roleARN, webToken)
	f.sts.Start()
	f.gce = gcefake.NewHandler(gcefake.Options{Logf: func(string, ...any) {}})
	f.gce.AddRegion(project, region)
	gceSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.gceAuth.Store(r.Header.Get("Authorization"))
		f.gce.ServeHTTP(w, r)
	}))
	f.gke = gkefake.New()
	f.gke.Start()
	t.Cleanup(func() {
		for _, c := range []interface{ Close() }{f.ecr, f.ec2, f.ebs, f.ecs, f.lambda, f.batch, f.eks, f.sts, f.gke} {
			c.Close()
		}
		gceSrv.Close()
	})
	s3, err := testenv.StartS3(context.Background(), f.dir, map[string]testenv.S3Grant{
		akid: {Read: []string{"records/"}, Write: []string{"records/" + recordsKey}},
	}, "records")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s3.Stop)
	f.s3 = s3
	for k, v := range map[string]string{"ecr": f.ecr.URL(), "ec2": f.ec2.URL(), "ebs": f.ebs.URL(), "ecs": f.ecs.URL(),
		"lambda": f.lambda.URL(), "batch": f.batch.URL(), "eks": f.eks.URL(), "sts": f.sts.URL(), "s3": s3.URL,
		"gce": gceSrv.URL, "gke": f.gke.Endpoint()} {
		f.url[k] = v
	}
	return f
}

// staticKeys are the test's AWS credentials in the variables a pod's
// Secret or IRSA would set.
var staticKeys = []string{"AWS_ACCESS_KEY_ID=" + akid, "AWS_SECRET_ACCESS_KEY=" + secret}

// run runs the child with the case, the fakes' URLs (those in urls
// replacing them) and env, as a pod (testenv.Pod), and fails the test
// when the child does.
func (f *fleet) run(t *testing.T, c, want string, urls map[string]string, env ...string) string {
	t.Helper()
	u := map[string]string{}
	for k, v := range f.url {
		u[k] = v
	}
	for k, v := range urls {
		u[k] = v
	}
	raw, err := json.Marshal(spec{Case: c, URL: u, Want: want})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := testenv.Pod{Env: append([]string{specVar + "=" + string(raw)}, env...)}.
		Command(ctx, t, os.Args[0], "-test.run=^TestInPod$", "-test.v", "-test.count=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestInPod") {
		t.Fatalf("case %s in a pod's environment: %v (after %s)\n%s", c, err, time.Since(start).Round(time.Millisecond), out)
	}
	return string(out)
}

// Every client reclaim builds, built as production builds it, with what a
// pod has: AWS keys in the environment and nothing else of this machine's
// (no AWS_CA_BUNDLE, HOME or proxy). Before the transport fix every AWS
// call here panicked.
func TestEveryClientInAPodsEnvironment(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	out := f.run(t, "clients", "", nil, append(staticKeys, "AWS_ENDPOINT_URL_STS="+f.url["sts"])...)
	// The EKS token the pod minted is one the cluster's authenticator takes.
	_, tok, ok := strings.Cut(out, "eks-token ")
	tok, _, _ = strings.Cut(tok, "\n")
	if !ok {
		t.Fatalf("the child printed no EKS token:\n%s", out)
	}
	if arn, err := f.sts.Verify(context.Background(), strings.TrimSpace(tok), "prod"); err != nil || !strings.HasSuffix(arn, ":user/reclaim") {
		t.Errorf("the pod's EKS token: %q, %v", arn, err)
	}
	for name, n := range map[string]int{"ecr": f.ecr.TotalCalls(), "ec2": f.ec2.TotalCalls(), "ebs": f.ebs.TotalCalls(),
		"ecs": f.ecs.TotalCalls(), "lambda": f.lambda.TotalCalls(), "batch": f.batch.TotalCalls(), "eks": f.eks.TotalCalls(),
		"gce": f.gce.TotalCalls(), "gke": f.gke.TotalCalls(), "sts AssumeRole": f.sts.Calls("AssumeRole"),
		"sts GetCallerIdentity": f.sts.Calls("GetCallerIdentity")} {
		if n == 0 {
			t.Errorf("%s: no call reached the fake", name)
		}
	}
	if f.ebs.Calls("ListServiceQuotas")+f.ebs.Calls("GetServiceQuota") == 0 {
		t.Errorf("service quotas: no call reached the fake: %v", f.ebs.CallCounts())
	}
}

// The child: one case, in the environment the parent gave it.
func TestInPod(t *testing.T) {
	raw := os.Getenv(specVar)
	if raw == "" {
		t.Skip("runs in a pod's environment, started by the other tests")
	}
	var s spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	if _, ok := os.LookupEnv("HOME"); ok {
		t.Fatal("HOME is set: not a pod's environment")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, ok := cases[s.Case]
	if !ok {
		t.Fatalf("no case %q", s.Case)
	}
	err := run(ctx, t, s.URL)
	switch {
	case s.Want == "" && err != nil:
		t.Fatalf("%s: %v", s.Case, err)
	case s.Want != "" && err == nil:
		t.Fatalf("%s: succeeded, want an error with %q", s.Case, s.Want)
	case s.Want != "" && !strings.Contains(err.Error(), s.Want):
		t.Fatalf("%s: %v, want an error with %q", s.Case, err, s.Want)
	}
	t.Logf("%s: %v", s.Case, err)
}

func skipInChild(t *testing.T) {
	if os.Getenv(specVar) != "" {
		t.Skip("the child runs TestInPod only")
	}
}

// service is how every AWS client here reaches its fake: the production
// options with an endpoint, and nothing that replaces what the environment
// gives (credentials, HTTP client).
func service(url string) awsclient.Service {
	return awsclient.Service{Account: account, Region: region, Endpoint: url, MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond}
}

var cases = map[string]func(ctx context.Context, t *testing.T, url map[string]string) error{
	"clients": func(ctx context.Context, t *testing.T, url map[string]string) error {
		var errs []error
		try := func(name string, err error) {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
		try("ecr", ecrList(ctx, service(url["ecr"])))
		// STS: the same client with a role to assume on top of the keys.
		withRole := service(url["ecr"])
		withRole.RoleARN = roleARN
		try("sts (AssumeRole)", ecrList(ctx, withRole))
		try("ec2", func() error {
			c, err := ec2.New(ctx, ec2.Options{Service: service(url["ec2"]), Subnets: []string{"subnet-0example"}})
			if err != nil {
				return err
			}
			l := c.List(ctx)
			return problem(l.Complete, l.Problem)
		}())
		try("ebs and service quotas", func() error {
			c, err := ebs.New(ctx, ebs.Options{Service: service(url["ebs"]), QuotasEndpoint: url["ebs"]})
			if err != nil {
				return err
			}
			if l := c.List(ctx); !l.Complete {
				return errors.New(l.Problem)
			}
			_, err = c.Quotas(ctx)
			return err
		}())
		try("ecs", images[*ecs.Client](ctx)(ecs.New(ctx, ecs.Options{Service: service(url["ecs"])})))
		try("lambda", images[*lambda.Client](ctx)(lambda.New(ctx, lambda.Options{Service: service(url["lambda"])})))
		try("batch", images[*batch.Client](ctx)(batch.New(ctx, batch.Options{Service: service(url["batch"])})))
		try("eks, its identity and its token", func() error {
			c, err := eks.New(ctx, eks.Options{Service: service(url["eks"]), STSEndpoint: url["sts"]})
			if err != nil {
				return err
			}
			// Discovery confirms whose identity it runs as first.
			if _, _, err := c.Identity().Confirm(ctx, account); err != nil {
				return err
			}
			if l := c.Discover(ctx); !l.Complete {
				return errors.New(l.Problem)
			}
			tok, err := c.TokenSource("prod").Token()
			if err != nil {
				return err
			}
			t.Logf("eks-token %s", tok.AccessToken)
			return nil
		}())
		try("s3", func() error {
			c, err := bucket.New(ctx, bucket.Options{Service: service(url["s3"]), Bucket: "records", PathStyle: true})
			if err != nil {
				return err
			}
			if err := c.Put(ctx, recordsKey, []byte("record")); err != nil {
				return err
			}
			_, err = c.Get(ctx, recordsKey)
			return err
		}())
		try("gce", gceList(ctx, gce.Options{Endpoint: url["gce"], WithoutAuthentication: true}))
		try("gke", func() error {
			c, err := gke.New(ctx, gke.Options{Endpoint: url["gke"], WithoutAuthentication: true, MaxAttempts: 2, RetryInitial: time.Millisecond})
			if err != nil {
				return err
			}
			l := c.Discover(ctx, project)
			return problem(l.Complete, l.Problem)
		}())
		return errors.Join(errs...)
	},
	// One AWS client, the credentials and endpoint from the environment.
	"ecr": func(ctx context.Context, t *testing.T, url map[string]string) error {
		return ecrList(ctx, service(url["ecr"]))
	},
	// ECR with the config's profile: agent-a.
	"ecr-profile": func(ctx context.Context, t *testing.T, url map[string]string) error {
		s := service(url["ecr"])
		s.Profile = "agent-a"
		return ecrList(ctx, s)
	},
	// ECR at the endpoint the environment names (AWS_ENDPOINT_URL_ECR).
	"ecr-endpoint-from-env": func(ctx context.Context, t *testing.T, url map[string]string) error {
		s := service("")
		return ecrList(ctx, s)
	},
	// GCE with application default credentials, the pod's way.
	"gce-adc": func(ctx context.Context, t *testing.T, url map[string]string) error {
		return gceList(ctx, gce.Options{Endpoint: url["gce"], MaxAttempts: 2, RetryInitial: time.Millisecond})
	},
	"gce": func(ctx context.Context, t *testing.T, url map[string]string) error {
		return gceList(ctx, gce.Options{Endpoint: url["gce"], WithoutAuthentication: true, MaxAttempts: 2, RetryInitial: time.Millisecond})
	},
}

// images lists a consumer's images with the client a constructor returned.
func images[C interface {
	Images(context.Context) inventory.ImageSource
}](ctx context.Context) func(C, error) error {
	return func(c C, err error) error {
		if err != nil {
			return err
		}
		src := c.Images(ctx)
		return problem(src.Complete, strings.Join(src.Problems, "; "))
	}
}

func ecrList(ctx context.Context, s awsclient.Service) error {
	c, err := ecr.New(ctx, ecr.Options{Service: s})
	if err != nil {
		return err
	}
	l := c.List(ctx)
	if err := problem(l.Complete, l.Problem); err != nil {
		return err
	}
	if len(l.Repos) != 1 {
		return fmt.Errorf("listed %d repositories, want 1", len(l.Repos))
	}
	return nil
}

func gceList(ctx context.Context, o gce.Options) error {
	c, err := gce.New(ctx, o)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.RegionQuotas(ctx, project, region, []string{"SSD_TOTAL_GB"})
	return err
}

func problem(complete bool, p string) error {
	if complete {
		return nil
	}
	return errors.New(p)
}

// tlsFront serves h over TLS with a certificate of its own; ca is that
// certificate as a PEM file.
func tlsFront(t *testing.T, dir string, h http.Handler) (url, ca string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca = filepath.Join(dir, "ca-"+strings.ReplaceAll(srv.Listener.Addr().String(), ":", "-")+".pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, ca
}

// proxy is a forward HTTP proxy to 127.0.0.1 that counts what it carries.
func proxy(t *testing.T, to string) (url string, carried *atomic.Int64) {
	t.Helper()
	carried = new(atomic.Int64)
	target := strings.TrimPrefix(to, "http://")
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", target
		carried.Add(1)
	}}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL, carried
}

// What reclaim reads from its environment (docs/operations.md), each
// present and absent, in a pod's environment otherwise.

// AWS_CA_BUNDLE: present, the AWS clients trust it; absent, they trust the
// system's roots only (and build their own HTTP client: the panic).
func TestAWSCABundle(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	url, ca := tlsFront(t, f.dir, f.ecr)
	tls := map[string]string{"ecr": url}
	f.run(t, "ecr", "", tls, append(staticKeys, "AWS_CA_BUNDLE="+ca)...)
	f.run(t, "ecr", "certificate signed by unknown authority", tls, staticKeys...)
	f.run(t, "ecr", "", nil, staticKeys...) // plain HTTP, no bundle: the pod's case
	f.run(t, "ecr", "AWS_CA_BUNDLE", nil, append(staticKeys, "AWS_CA_BUNDLE="+filepath.Join(f.dir, "missing.pem"))...)
}

// SSL_CERT_FILE (and SSL_CERT_DIR): Go's system roots, which the Google
// clients use. The image sets it to its bundle; a test CA is trusted only
// when named.
func TestSSLCertFile(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	url, ca := tlsFront(t, f.dir, f.gce)
	tls := map[string]string{"gce": url}
	f.run(t, "gce", "", tls, "SSL_CERT_FILE="+ca)
	f.run(t, "gce", "certificate signed by unknown authority", tls) // the image's bundle
}

// HTTPS_PROXY, HTTP_PROXY and NO_PROXY: present, calls go through the
// proxy; absent (every other case here), they go straight to the endpoint.
func TestProxyVariables(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	px, carried := proxy(t, f.url["ecr"])
	// A name only the proxy resolves: Go never proxies loopback addresses.
	_, port, _ := strings.Cut(strings.TrimPrefix(f.url["ecr"], "http://"), ":")
	viaName := map[string]string{"ecr": "http://ecr.reclaim.test:" + port}
	f.run(t, "ecr", "", viaName, append(staticKeys, "HTTP_PROXY="+px, "HTTPS_PROXY="+px)...)
	if carried.Load() == 0 {
		t.Fatal("the proxy carried nothing")
	}
	n := carried.Load()
	f.run(t, "ecr", "", nil, append(staticKeys, "HTTP_PROXY="+px, "NO_PROXY=127.0.0.1")...)
	if carried.Load() != n {
		t.Errorf("NO_PROXY: the proxy carried %d more calls", carried.Load()-n)
	}
}

// AWS credentials: IRSA's AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE
// (STS at AWS_ENDPOINT_URL_STS), EKS Pod Identity's
// AWS_CONTAINER_CREDENTIALS_FULL_URI with its token file, the keys, or
// none: then every call fails with the chain's error and nothing panics.
func TestAWSCredentialsFromThePodsEnvironment(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	tokenFile := filepath.Join(f.dir, "eks-token")
	if err := os.WriteFile(tokenFile, []byte(webToken), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "ecr", "", nil, "AWS_ROLE_ARN="+roleARN, "AWS_WEB_IDENTITY_TOKEN_FILE="+tokenFile, "AWS_ENDPOINT_URL_STS="+f.url["sts"])
	if f.sts.Calls("AssumeRoleWithWebIdentity") == 0 {
		t.Error("IRSA: no AssumeRoleWithWebIdentity reached STS")
	}
	if err := os.WriteFile(tokenFile, []byte("another.token"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "ecr", "InvalidIdentityToken", nil, "AWS_ROLE_ARN="+roleARN, "AWS_WEB_IDENTITY_TOKEN_FILE="+tokenFile, "AWS_ENDPOINT_URL_STS="+f.url["sts"])

	agentToken := filepath.Join(f.dir, "pod-identity-token")
	if err := os.WriteFile(agentToken, []byte(podIDToken), 0o644); err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != podIDToken {
			http.Error(w, `{"code":"AccessDeniedException","message":"bad token"}`, http.StatusForbidden)
			return
		}
		served.Add(1)
		fmt.Fprintf(w, `{"AccessKeyId":"ASIAPODIDENTITY","SecretAccessKey":"pod-identity-secret","Token":"pod-identity-session","AccountId":%q,"Expiration":%q}`,
			account, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(agent.Close)
	f.run(t, "ecr", "", nil, "AWS_CONTAINER_CREDENTIALS_FULL_URI="+agent.URL+"/v1/credentials", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="+agentToken)
	if served.Load() == 0 {
		t.Error("Pod Identity: the agent served no credentials")
	}

	// The pod's metadata servers refuse at once (testenv.Pod), and the
	// child's context bounds the chains: a hang fails the run.
	f.run(t, "ecr", "credentials", nil)
}

// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>: the SDK's own endpoint
// settings, used when the config names no endpoint.
func TestAWSEndpointVariables(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	f.run(t, "ecr-endpoint-from-env", "", nil, append(staticKeys, "AWS_ENDPOINT_URL_ECR="+f.url["ecr"])...)
	f.run(t, "ecr-endpoint-from-env", "", nil, append(staticKeys, "AWS_ENDPOINT_URL="+f.url["ecr"])...)
}

// Google credentials: Workload Identity's metadata server (GCE_METADATA_HOST
// names it here), GOOGLE_APPLICATION_CREDENTIALS naming a key file, or
// neither: a clear error.
func TestGoogleCredentialsFromThePodsEnvironment(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	var tokens atomic.Int64
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" { // a key file's token_uri: the JWT grant
			if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.FormValue("assertion") == "" {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"ya29.key-file-example","expires_in":3599,"token_type":"Bearer"}`)
			return
		}
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		switch {
		case strings.HasSuffix(r.URL.Path, "/service-accounts/default/token"):
			tokens.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":%q,"expires_in":3599,"token_type":"Bearer"}`, gceToken)
		case strings.HasSuffix(r.URL.Path, "/universe/universe-domain"):
			fmt.Fprint(w, "googleapis.com")
		case strings.HasSuffix(r.URL.Path, "/project/project-id"):
			fmt.Fprint(w, project)
		case strings.HasSuffix(r.URL.Path, "/service-accounts/default/email"):
			fmt.Fprint(w, "reclaim@example-project.iam.gserviceaccount.com")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(md.Close)
	f.run(t, "gce-adc", "", nil, "GCE_METADATA_HOST="+strings.TrimPrefix(md.URL, "http://"))
	if tokens.Load() == 0 || f.gceAuth.Load() != "Bearer "+gceToken {
		t.Errorf("Workload Identity: %d tokens served, GCE saw %q", tokens.Load(), f.gceAuth.Load())
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(f.dir, "sa.json")
	sa, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": project, "private_key_id": "0123456789abcdef",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": "reclaim@example-project.iam.gserviceaccount.com",
		"client_id": "1234567890", "token_uri": md.URL + "/token"})
	if err := os.WriteFile(keyFile, sa, 0o644); err != nil {
		t.Fatal(err)
	}
	f.gceAuth.Store("")
	f.run(t, "gce-adc", "", nil, "GOOGLE_APPLICATION_CREDENTIALS="+keyFile)
	if auth, _ := f.gceAuth.Load().(string); auth != "Bearer ya29.key-file-example" {
		t.Errorf("a key file: GCE saw Authorization %q", auth)
	}
	f.run(t, "gce-adc", "missing.json", nil, "GOOGLE_APPLICATION_CREDENTIALS="+filepath.Join(f.dir, "missing.json"))
	// The pod's metadata servers refuse at once (testenv.Pod), and the
	// child's context bounds the chains: a hang fails the run.
	f.run(t, "gce-adc", "credentials", nil)
}

// AWS_PROFILE, AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE: a profile
// the config names is read from the files the environment names; with no
// HOME and no files, it is an error that names the profile.
func TestAWSProfiles(t *testing.T) {
	skipInChild(t)
	f := newFleet(t)
	creds := filepath.Join(f.dir, "credentials")
	if err := os.WriteFile(creds, []byte("[agent-a]\naws_access_key_id = "+akid+"\naws_secret_access_key = "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "ecr-profile", "", nil, "AWS_SHARED_CREDENTIALS_FILE="+creds)
	f.run(t, "ecr-profile", "agent-a", nil)
	f.run(t, "ecr", "", nil, "AWS_PROFILE=agent-a", "AWS_SHARED_CREDENTIALS_FILE="+creds)
}
