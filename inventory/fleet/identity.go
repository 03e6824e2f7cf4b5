package fleet

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
)

// APIServer is what a configured cluster's kubeconfig (or the pod's
// in-cluster config) says of its API server: its host:port and CA
// certificates (DER). Either may be unknown.
type APIServer struct {
	host string
	cas  [][]byte
}

// verdict is how a configured and a discovered cluster of one cloud name
// relate.
type verdict int

const (
	same     verdict = iota // the same cluster: joined
	distinct                // two clusters that the config tells apart
	conflict                // cannot be told apart, or disagree: both hold
)

// judge compares a configured cluster's API server and declared place with
// a discovered cluster: the API server decides where both are known (the
// same host or CA is the same cluster, another is not); else the declared
// place does; else nothing can tell them apart.
func judge(api APIServer, where inventory.Place, c inventory.FleetCluster) (verdict, string) {
	declared := where.Known()
	if declared && !where.Agrees(c) {
		return distinct, ""
	}
	if api.host != "" && c.Endpoint != "" {
		if api.host == hostOf(c.Endpoint) || sharesCA(api.cas, c.CAData) {
			return same, ""
		}
		return conflict, fmt.Sprintf("its kubeconfig's API server %s is not the discovered cluster's %s", api.host, hostOf(c.Endpoint))
	}
	if len(api.cas) > 0 && len(c.CAData) > 0 {
		if sharesCA(api.cas, c.CAData) {
			return same, ""
		}
		return conflict, "its API server's CA is not the discovered cluster's"
	}
	if declared {
		return same, ""
	}
	return conflict, "reclaim cannot compare their API servers and the entry does not say where it lives"
}

// sharesCA says whether a configured cluster's CA certificates and a
// discovered cluster's CA bundle (PEM) have a certificate in common: each
// cluster has a CA of its own.
func sharesCA(cas [][]byte, pemData []byte) bool {
	if len(cas) == 0 || len(pemData) == 0 {
		return false
	}
	for _, der := range certsOf(pemData) {
		if slices.ContainsFunc(cas, func(c []byte) bool { return bytes.Equal(c, der) }) {
			return true
		}
	}
	return false
}

// certsOf are the DER certificates of a PEM bundle.
func certsOf(data []byte) [][]byte {
	var out [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, b.Bytes)
		}
	}
}

// hostOf is the host:port of an API server URL, for matching a configured
// cluster's kubeconfig with a discovered endpoint.
func hostOf(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	h := u.Host
	if u.Port() == "" && u.Scheme == "https" {
		h += ":443"
	}
	return strings.ToLower(h)
}

// ConfiguredAPIs reads each configured cluster's API server from its
// kubeconfig: its host and CA certificates. An in-cluster entry's host is
// the service's address, which discovery never lists, so only its CA (the
// pod's mounted bundle) counts. One that cannot be loaded is unknown: it
// joins a discovered cluster only by its declared place.
func ConfiguredAPIs(targets []kube.Target) map[string]APIServer {
	out := map[string]APIServer{}
	for _, t := range targets {
		rc, err := kube.RESTConfig(t)
		if err != nil {
			continue
		}
		var api APIServer
		if !t.InCluster {
			api.host = hostOf(rc.Host)
		}
		ca := rc.CAData
		if len(ca) == 0 && rc.CAFile != "" {
			ca, _ = os.ReadFile(rc.CAFile)
		}
		api.cas = certsOf(ca)
		out[t.Name] = api
	}
	return out
}
