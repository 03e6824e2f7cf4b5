// Package lambdafake is a wire-level fake of the Lambda API (REST-JSON,
// /2015-03-31/functions) for the calls that read which images functions
// run: ListFunctions, ListVersionsByFunction and GetFunction. It paginates
// with Marker/NextMarker, answers the real error shapes (X-Amzn-Errortype
// with {"Type","Message"}), checks the SigV4 scope, and injects throttling,
// denial, server errors and latency; driven by the real SDK client.
package lambdafake

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, the keys of Calls.
const (
	OpListFunctions          = "ListFunctions"
	OpListVersionsByFunction = "ListVersionsByFunction"
	OpGetFunction            = "GetFunction"
)

const prefix = "/2015-03-31/functions/"

// Version is one version of an image function.
type Version struct {
	// Version is "$LATEST" or a number.
	Version          string
	ImageURI         string
	ResolvedImageURI string // REPO@sha256:...
}

type function struct {
	zip      bool
	versions []Version
}

// Options configure the fake.
type Options = fakeapi.AWSOptions

// Server is the fake. Safe for concurrent use.
type Server struct {
	fakeapi.Counter
	fakeapi.Listener
	fakeapi.Faults
	o      Options
	mu     sync.Mutex
	fns    map[string]*function
	vanish map[string]bool
}

// New returns an empty fake; Start serves it.
func New(o Options) *Server {
	return &Server{o: o.WithDefaults(), fns: map[string]*function{}, vanish: map[string]bool{}}
}

// Start serves the fake on a local listener.
func (s *Server) Start() { s.Listener.Start(s) }

// AddFunction adds an image function with its versions; the first is
// $LATEST whatever its Version says.
func (s *Server) AddFunction(name string, versions ...Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(versions) > 0 {
		versions[0].Version = "$LATEST"
	}
	s.fns[name] = &function{versions: versions}
}

// AddZipFunction adds a function of package type Zip.
func (s *Server) AddZipFunction(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fns[name] = &function{zip: true, versions: []Version{{Version: "$LATEST"}}}
}

// DeleteOnGet lists the function but answers ResourceNotFoundException
// when it is read: deleted in between.
func (s *Server) DeleteOnGet(name string) { s.mu.Lock(); s.vanish[name] = true; s.mu.Unlock() }

func (s *Server) arn(name, version string) string {
	a := fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", s.o.Region, s.o.Account, name)
	if version != "" && version != "$LATEST" {
		a += ":" + version
	}
	return a
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath()+"/", prefix)
	rest = strings.TrimSuffix(rest, "/")
	if !ok || r.Method != http.MethodGet {
		writeErr(w, http.StatusNotFound, "UnknownOperationException", "unsupported "+r.Method+" "+r.URL.Path)
		return
	}
	op, name := OpListFunctions, ""
	if rest != "" {
		n, tail, _ := strings.Cut(rest, "/")
		name, _ = url.PathUnescape(n)
		op = OpGetFunction
		if tail == "versions" {
			op = OpListVersionsByFunction
		}
	}
	s.Count(op, false)
	fakeapi.Saw(Permission(op))
	if !fakeapi.Delay(r.Context(), s.o.Latency) {
		return
	}
	if region, service, ok := fakeapi.SigV4Scope(r.Header.Get("Authorization")); !ok || service != "lambda" || region != s.o.Region {
		writeErr(w, http.StatusForbidden, "InvalidSignatureException", fmt.Sprintf("credential scope %s/%s, want %s/lambda", region, service, s.o.Region))
		return
	}
	denied, throttled, failed := s.Take(op)
	switch {
	case denied:
		writeErr(w, http.StatusForbidden, "AccessDeniedException", "User: arn:aws:sts::"+s.o.Account+":assumed-role/reclaim/reclaim is not authorized to perform: lambda:"+op)
		return
	case throttled:
		w.Header().Set("Retry-After", "0")
		writeErr(w, http.StatusTooManyRequests, "TooManyRequestsException", "Rate exceeded")
		return
	case failed:
		writeErr(w, http.StatusInternalServerError, "ServiceException", "internal error")
		return
	}
	q := r.URL.Query()
	switch op {
	case OpListFunctions:
		s.mu.Lock()
		names := make([]string, 0, len(s.fns))
		for n := range s.fns {
			names = append(names, n)
		}
		sort.Strings(names)
		items := make([]any, len(names))
		for i, n := range names {
			items[i] = s.config(n, s.fns[n], "$LATEST")
		}
		s.mu.Unlock()
		s.page(w, q, "Functions", items)
	case OpListVersionsByFunction:
		s.mu.Lock()
		f, ok := s.fns[name]
		var items []any
		if ok && !s.vanish[name] {
			for _, v := range f.versions {
				items = append(items, s.config(name, f, v.Version))
			}
		}
		s.mu.Unlock()
		if items == nil {
			notFound(w, s.arn(name, ""))
			return
		}
		s.page(w, q, "Versions", items)
	case OpGetFunction:
		s.get(w, name, q.Get("Qualifier"))
	}
}

// config is a FunctionConfiguration.
func (s *Server) config(name string, f *function, version string) map[string]any {
	pt := "Image"
	if f.zip {
		pt = "Zip"
	}
	return map[string]any{"FunctionName": name, "FunctionArn": s.arn(name, version), "Version": version, "PackageType": pt,
		"State": "Active", "LastModified": "2026-11-01T10:00:00.000+0000"}
}

func (s *Server) get(w http.ResponseWriter, name, qualifier string) {
	if qualifier == "" {
		qualifier = "$LATEST"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.fns[name]
	if !ok || s.vanish[name] {
		notFound(w, s.arn(name, qualifier))
		return
	}
	for _, v := range f.versions {
		if v.Version != qualifier {
			continue
		}
		code := map[string]any{"RepositoryType": "S3", "Location": "https://awslambda-" + s.o.Region + "-tasks.s3." + s.o.Region + ".amazonaws.com/snapshots/" + name}
		if !f.zip {
			code = map[string]any{"RepositoryType": "ECR", "ImageUri": v.ImageURI, "ResolvedImageUri": v.ResolvedImageURI}
		}
		fakeapi.WriteJSON(w, map[string]any{"Configuration": s.config(name, f, qualifier), "Code": code})
		return
	}
	notFound(w, s.arn(name, qualifier))
}

// page answers a list: MaxItems 1 to 50, Marker an offset.
func (s *Server) page(w http.ResponseWriter, q url.Values, field string, items []any) {
	max := 50
	if v := q.Get("MaxItems"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			writeErr(w, http.StatusBadRequest, "InvalidParameterValueException", "1 validation error detected: Value '"+v+"' at 'maxItems' failed to satisfy constraint")
			return
		}
		max = min(n, 50)
	}
	page, next, ok := fakeapi.Page(items, max, q.Get("Marker"), "m-")
	if !ok {
		writeErr(w, http.StatusBadRequest, "InvalidParameterValueException", "Invalid Marker")
		return
	}
	out := map[string]any{field: page}
	if next != "" {
		out["NextMarker"] = next
	}
	fakeapi.WriteJSON(w, out)
}

func notFound(w http.ResponseWriter, arn string) {
	writeErr(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+arn)
}

// writeErr answers as Lambda does: the code in X-Amzn-Errortype, the
// message in the body.
func writeErr(w http.ResponseWriter, status int, code, msg string) {
	fakeapi.WriteErrorBody(w, status, code, map[string]string{"Type": "User", "Message": msg})
}
