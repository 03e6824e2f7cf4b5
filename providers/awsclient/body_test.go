package awsclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"reclaim.dev/reclaim/providers/awsclient"
)

// keeping answers GetCallerIdentity without reading the request body, and
// keeps the body as Go's transport would while it checks its length.
type keeping struct{ body io.ReadCloser }

const callerIdentity = `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
	`<Arn>arn:aws:iam::123456789012:user/example</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>` +
	`</GetCallerIdentityResult><ResponseMetadata><RequestId>example</RequestId></ResponseMetadata></GetCallerIdentityResponse>`

func (k *keeping) Do(r *http.Request) (*http.Response, error) {
	k.body = r.Body
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/xml"}},
		Body: io.NopCloser(strings.NewReader(callerIdentity)), Request: r}, nil
}

// The transport can still read the whole request body after the SDK has
// taken the response and closed its own: a call whose response arrived is
// not failed, and so not repeated, by that close.
func TestTransportOwnsTheRequestBody(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the loader would want its own client type
	k := &keeping{}
	cfg, err := awsclient.Config{Region: "us-east-1", HTTPClient: k,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sts.NewFromConfig(cfg).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(k.body)
	if err != nil || !strings.Contains(string(b), "Action=GetCallerIdentity") {
		t.Fatalf("body read after the call: %q, %v", b, err)
	}
}

// As in a pod: no AWS_CA_BUNDLE, so the loader builds no HTTP client and
// leaves aws.Config.HTTPClient nil. The wrapper must still reach the server
// (it once held the nil and every call panicked).
func TestTransportWithoutALoaderClient(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, callerIdentity)
	}))
	defer srv.Close()
	cfg, err := awsclient.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	api := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = &srv.URL })
	out, err := api.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil || out.Account == nil || *out.Account != "123456789012" {
		t.Fatalf("GetCallerIdentity: %+v, %v", out, err)
	}
}
