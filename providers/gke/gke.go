// Package gke discovers the GKE clusters of a project (container API v1,
// projects.locations.clusters.list over every location) and mints the token
// that reads them: the Google OAuth2 access token of reclaim's own identity
// (Workload Identity, application default credentials, or a key file), what
// gke-gcloud-auth-plugin hands kubectl. Nothing is written to disk and no
// exec plugin runs.
package gke

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gcpclient"
)

// Scopes are what gke-gcloud-auth-plugin asks for.
var Scopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// Options configure the client.
type Options struct {
	// Endpoint overrides the container API (a fake, a private endpoint).
	Endpoint              string
	WithoutAuthentication bool
	// CredentialsFile is a service-account key; empty: application default
	// credentials (Workload Identity in a pod).
	CredentialsFile string
	// PrivateEndpoint reads clusters through their private endpoint.
	PrivateEndpoint bool
	UserAgent       string
	HTTPClient      *http.Client
	// MaxAttempts and RetryInitial bound retries of 429 and 5xx; defaults 5
	// and 500ms, doubling.
	MaxAttempts  int
	RetryInitial time.Duration
}

// Client lists clusters.
type Client struct {
	svc     *container.Service
	o       Options
	calls   atomic.Int64
	private bool
}

// New builds the container API client; it calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.RetryInitial <= 0 {
		o.RetryInitial = 500 * time.Millisecond
	}
	copts := gcpclient.Reach{Endpoint: o.Endpoint, WithoutAuthentication: o.WithoutAuthentication,
		CredentialsFile: o.CredentialsFile, UserAgent: o.UserAgent, HTTPClient: o.HTTPClient}.ClientOptions()
	svc, err := container.NewService(ctx, copts...)
	if err != nil {
		return nil, fmt.Errorf("gke: container client: %w", err)
	}
	return &Client{svc: svc, o: o, private: o.PrivateEndpoint}, nil
}

// Calls is how many clusters.list calls were made (attempts included).
func (c *Client) Calls() int { return int(c.calls.Load()) }

// Discover lists every cluster of the project in one call. Zones that did
// not answer (missingZones) make the listing incomplete: clusters there are
// unknown, not absent.
func (c *Client) Discover(ctx context.Context, project string) inventory.FleetListing {
	out := inventory.FleetListing{Platform: inventory.GKE, Scope: project}
	var resp *container.ListClustersResponse
	var err error
	wait := c.o.RetryInitial
	for attempt := 1; ; attempt++ {
		c.calls.Add(1)
		resp, err = c.svc.Projects.Locations.Clusters.List("projects/" + project + "/locations/-").Context(ctx).Do()
		if err == nil || attempt >= c.o.MaxAttempts || !retryable(err) {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			err = ctx.Err()
		}
		if ctx.Err() != nil {
			break
		}
		wait *= 2
	}
	out.Calls = int(c.calls.Load())
	if err != nil {
		out.Problem = fmt.Sprintf("gke clusters.list in project %s: %v%s", project, err, hint(err, project))
		return out
	}
	for _, k := range resp.Clusters {
		out.Clusters = append(out.Clusters, c.convert(project, k))
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Name < out.Clusters[j].Name })
	if len(resp.MissingZones) > 0 {
		out.Problem = fmt.Sprintf("gke clusters.list in project %s: zones %s did not answer: clusters there are unknown, not absent", project, strings.Join(resp.MissingZones, ", "))
		return out
	}
	out.Complete = true
	return out
}

func (c *Client) convert(project string, k *container.Cluster) inventory.FleetCluster {
	fc := inventory.FleetCluster{Name: k.Name, Platform: inventory.GKE, ID: fmt.Sprintf("projects/%s/locations/%s/clusters/%s", project, k.Location, k.Name),
		Project: project, Location: k.Location, Network: inventory.LastSegment(k.Network), Labels: k.ResourceLabels, Status: k.Status}
	if k.Subnetwork != "" {
		fc.Subnets = []string{inventory.LastSegment(k.Subnetwork)}
	}
	endpoint := k.Endpoint
	if c.private && k.PrivateClusterConfig != nil && k.PrivateClusterConfig.PrivateEndpoint != "" {
		endpoint = k.PrivateClusterConfig.PrivateEndpoint
	}
	if endpoint != "" {
		if !strings.Contains(endpoint, "://") {
			endpoint = "https://" + endpoint
		}
		fc.Endpoint = endpoint
	}
	if t, err := time.Parse(time.RFC3339, k.CreateTime); err == nil {
		fc.Created = t
	}
	if k.MasterAuth != nil && k.MasterAuth.ClusterCaCertificate != "" {
		if pem, err := base64.StdEncoding.DecodeString(k.MasterAuth.ClusterCaCertificate); err == nil {
			fc.CAData = pem
		}
	}
	return fc
}

func retryable(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && (ge.Code == http.StatusTooManyRequests || ge.Code >= 500)
}

func hint(err error, project string) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
		return fmt.Sprintf(" — reclaim's service account needs container.clusters.list on project %s: grant it roles/container.clusterViewer (deploy/README.md)", project)
	}
	return ""
}

// TokenSource returns reclaim's own Google access token: from the key file,
// else application default credentials (the metadata server under Workload
// Identity). It is cached until shortly before it expires.
func TokenSource(ctx context.Context, credentialsFile string) (oauth2.TokenSource, error) {
	var creds *google.Credentials
	var err error
	if credentialsFile != "" {
		b, rerr := os.ReadFile(credentialsFile)
		if rerr != nil {
			return nil, fmt.Errorf("gke: %w", rerr)
		}
		creds, err = google.CredentialsFromJSON(ctx, b, Scopes...)
	} else {
		creds, err = google.FindDefaultCredentials(ctx, Scopes...)
	}
	if err != nil {
		return nil, fmt.Errorf("gke: credentials for reading clusters: %w", err)
	}
	return oauth2.ReuseTokenSource(nil, creds.TokenSource), nil
}
