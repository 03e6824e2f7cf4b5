package awsclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"reclaim.dev/reclaim/providers/awsclient"
)

// refusing answers every request with a refused dial, counting them.
type refusing struct{ n atomic.Int32 }

func (r *refusing) Do(*http.Request) (*http.Response, error) {
	r.n.Add(1)
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

// An endpoint that cannot be reached is tried at most UnreachableAttempts
// times, not the 10 attempts backing off to 20 s a throttle gets: the
// report comes in seconds. Through a real SDK client and its retry
// middleware.
func TestUnreachableEndpointIsBounded(t *testing.T) {
	tr := &refusing{}
	client := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String("https://sts.invalid.example"),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		HTTPClient:  tr, Retryer: awsclient.Retryer(10, 20*time.Second)})
	start := time.Now()
	_, err := client.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "endpoint unreachable") || !awsclient.Unreachable(err) {
		t.Fatalf("err %v", err)
	}
	if n := tr.n.Load(); n < 2 || n > awsclient.UnreachableAttempts {
		t.Fatalf("%d attempts, want 2 to %d", n, awsclient.UnreachableAttempts)
	}
	if took > 30*time.Second {
		t.Fatalf("took %s", took)
	}
}

func TestUnreachable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{&net.DNSError{Err: "no such host", Name: "x.invalid"}, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, false},
		{errors.New("throttled"), false},
	} {
		if got := awsclient.Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A Service without an endpoint keeps the one the SDK resolved from the
// environment (AWS_ENDPOINT_URL_<SERVICE>); one with an endpoint wins.
func TestEndpointFromTheEnvironmentIsKept(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1/from-env")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	for _, c := range []struct{ endpoint, want string }{{"", "http://127.0.0.1:1/from-env"}, {"http://127.0.0.1:2/set", "http://127.0.0.1:2/set"}} {
		setup, err := awsclient.Service{Account: "123456789012", Region: "us-east-1", Endpoint: c.endpoint}.Load(context.Background(), "sts", 10, 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		sts.NewFromConfig(setup.Config, func(o *sts.Options) {
			setup.Into(&o.BaseEndpoint, &o.Retryer, &o.APIOptions)
			got = aws.ToString(o.BaseEndpoint)
		})
		if got != c.want {
			t.Errorf("endpoint %q: the client uses %q, want %q", c.endpoint, got, c.want)
		}
	}
}
