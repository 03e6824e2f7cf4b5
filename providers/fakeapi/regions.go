package fakeapi

import (
	"fmt"
	"net/http"
	"sync"
)

// Regions serves one AWS service's fakes of several regions on one
// endpoint, as AWS_ENDPOINT_URL_<SERVICE> gives a client one endpoint for
// every region: each request goes to the fake of the region its SigV4
// credential scope names. A request for a region without a fake is
// answered 403 UnrecognizedClientException, as an endpoint that does not
// serve the region would refuse it. Safe for concurrent use.
type Regions struct {
	Listener
	mu sync.Mutex
	by map[string]http.Handler
}

// NewRegions serves the fakes by region, started.
func NewRegions(by map[string]http.Handler) *Regions {
	r := &Regions{by: map[string]http.Handler{}}
	for k, h := range by {
		r.by[k] = h
	}
	r.Start(r)
	return r
}

// Set serves h for region (nil stops serving it).
func (r *Regions) Set(region string, h http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h == nil {
		delete(r.by, region)
		return
	}
	r.by[region] = h
}

// ServeHTTP routes by the credential scope's region.
func (r *Regions) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	region, _, ok := SigV4Scope(req.Header.Get("Authorization"))
	r.mu.Lock()
	h := r.by[region]
	r.mu.Unlock()
	if !ok || h == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"__type":"UnrecognizedClientException","message":"no fake serves region %q"}`, region)
		return
	}
	h.ServeHTTP(w, req)
}
