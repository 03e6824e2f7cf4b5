package awsclient

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// ownBody hands the transport a request body of its own. The SDK closes its
// body as soon as the response has arrived, while Go's transport may still be
// reading it to check its length; that read fails, the transport closes the
// connection under the response, and the SDK repeats the call
// (aws/aws-sdk-go-v2#2737). A repeated BatchDeleteImage or
// DeleteNetworkInterface then reports "not found" for what the first one
// deleted. Bodies here are small JSON or form documents.
type ownBody struct{ next aws.HTTPClient }

// wrapBody wraps next, or the SDK's own client when next is nil: the
// config loader leaves aws.Config.HTTPClient nil unless it had to build one
// (for AWS_CA_BUNDLE, say), and a pod has no such variable.
func wrapBody(next aws.HTTPClient) ownBody {
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	return ownBody{next}
}

func (o ownBody) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return o.next.Do(r)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return o.next.Do(r)
}
