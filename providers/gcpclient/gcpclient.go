// Package gcpclient is the plumbing the Google providers (gce, gke) share:
// how a client library reaches its API.
package gcpclient

import (
	"net/http"

	"google.golang.org/api/option"
)

// Reach is how a client reaches its API: the providers' Options fields of
// the same names.
type Reach struct {
	Endpoint              string // "" is the library's
	WithoutAuthentication bool   // fakes only
	CredentialsFile       string // "" is application default credentials
	UserAgent             string
	HTTPClient            *http.Client // used as is: it must add credentials itself
}

// ClientOptions are the client library's options for r.
func (r Reach) ClientOptions() []option.ClientOption {
	var out []option.ClientOption
	if r.Endpoint != "" {
		out = append(out, option.WithEndpoint(r.Endpoint))
	}
	if r.WithoutAuthentication {
		out = append(out, option.WithoutAuthentication())
	}
	if r.CredentialsFile != "" {
		out = append(out, option.WithCredentialsFile(r.CredentialsFile))
	}
	if r.UserAgent != "" {
		out = append(out, option.WithUserAgent(r.UserAgent))
	}
	if r.HTTPClient != nil {
		out = append(out, option.WithHTTPClient(r.HTTPClient))
	}
	return out
}
