// Package ecrfake is a wire-level fake of the parts of the Amazon ECR API that
// reclaim uses: DescribeRepositories, DescribeImages, ListImages,
// BatchGetImage, BatchDeleteImage and ListTagsForResource. It speaks awsJson1_1
// as the real service does (POST /, X-Amz-Target
// AmazonEC2ContainerRegistry_V20150921.<Op>, epoch-second timestamps as JSON
// numbers, errors as {"__type": code, "message": text}), so the real
// aws-sdk-go-v2 ECR client drives it through BaseEndpoint and static
// credentials. Requests without a SigV4 Authorization header for service "ecr"
// in the fake's region are refused, so a misconfigured client fails loudly.
//
// One fake holds many registries (accounts) of one region, keyed by registryId.
// Everything a test arranges or observes is a method on *Server: seeding
// (AddRepository, AddImage, AddImages, RemoveRepository, RemoveImage), fault
// injection (FailNext, FailDelete), per-operation rate limits (Options.Rates,
// SetRate), latency, and counters (Calls, CallCounts, TotalCalls,
// MutatingCalls, Throttled).
//
// Behaviour that mirrors real ECR and matters to a garbage collector:
//   - DescribeImages pages hold at most 1000 images (default 100); with imageIds
//     (at most 100) one missing image fails the whole call with
//     ImageNotFoundException.
//   - BatchDeleteImage takes at most 100 ids; per-image problems come back in
//     failures[] with HTTP 200: ImageNotFound, and ImageReferencedByManifestList
//     for a manifest that an index still present in the repository lists. Ids
//     are processed in request order, so an index deleted earlier in the same
//     request no longer protects its children.
//   - BatchGetImage records a pull (sets the image's last pull time), as real
//     ECR does (aws/containers-roadmap#2390), unless Options.PullTimeExcluded.
//
// All methods are safe for concurrent use.
package ecrfake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operation names, as in X-Amz-Target after the prefix.
const (
	OpDescribeRepositories = "DescribeRepositories"
	OpDescribeImages       = "DescribeImages"
	OpListImages           = "ListImages"
	OpBatchGetImage        = "BatchGetImage"
	OpBatchDeleteImage     = "BatchDeleteImage"
	OpListTagsForResource  = "ListTagsForResource"
	OpGetRepositoryPolicy  = "GetRepositoryPolicy"
	OpGetRegistryPolicy    = "GetRegistryPolicy"
	// OpUnknown counts requests the fake could not route (wrong path or target).
	OpUnknown = fakeapi.Unknown
)

// TargetPrefix is the X-Amz-Target prefix of every ECR operation.
const TargetPrefix = "AmazonEC2ContainerRegistry_V20150921."

// ContentType is the awsJson1_1 content type of requests and responses.
const ContentType = "application/x-amz-json-1.1"

// DefaultAccount is the registry used when a request has no registryId.
const DefaultAccount = "123456789012"

// Limits of the real API.
const (
	MaxPageSize     = 1000 // maxResults upper bound
	DefaultPageSize = 100  // DescribeImages, ListImages, DescribeRepositories without maxResults
	MaxImageIDs     = 100  // imageIds of BatchDeleteImage, BatchGetImage, DescribeImages
)

// Error codes the fake answers with.
const (
	CodeServer                 = "ServerException"
	CodeInvalidParameter       = "InvalidParameterException"
	CodeRepositoryNotFound     = "RepositoryNotFoundException"
	CodeImageNotFound          = "ImageNotFoundException"
	CodeThrottling             = "ThrottlingException"
	CodeAccessDenied           = "AccessDeniedException"
	CodeLimitExceeded          = "LimitExceededException"
	CodeMissingAuthentication  = "MissingAuthenticationTokenException"
	CodeInvalidSignature       = "InvalidSignatureException"
	CodeUnknownOperation       = "UnknownOperationException"
	CodeSerialization          = "SerializationException"
	CodeRepoPolicyNotFound     = "RepositoryPolicyNotFoundException"
	CodeRegistryPolicyNotFound = "RegistryPolicyNotFoundException"
)

// Per-image failure codes (failures[].failureCode).
const (
	FailureImageNotFound                 = "ImageNotFound"
	FailureImageReferencedByManifestList = "ImageReferencedByManifestList"
	FailureMissingDigestAndTag           = "MissingDigestAndTag"
	FailureInvalidImageDigest            = "InvalidImageDigest"
)

// Media types the fake knows.
const (
	MediaTypeOCIIndex       = "application/vnd.oci.image.index.v1+json"
	MediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	MediaTypeOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
)

func isIndex(mt string) bool { return mt == MediaTypeOCIIndex || mt == MediaTypeDockerList }

// RateLimit is a token bucket (fakeapi.RateLimit). A request without a
// token is answered 400 ThrottlingException "Rate exceeded".
type RateLimit = fakeapi.RateLimit

// Options configures a Server. The zero value is usable.
type Options struct {
	// Region is the region the fake serves; requests must be signed for it.
	// Default us-east-1.
	Region string
	// Latency is added to every request before it is handled.
	Latency time.Duration
	// Rates limits operations by name; the key "*" is one bucket shared by
	// every operation (checked after the operation's own).
	Rates map[string]RateLimit
	// OnRequest, if set, is called for every routed request with its
	// operation name, before it is handled (outside the fake's lock).
	OnRequest func(op string)
	// PullTimeExcluded keeps BatchGetImage from recording a pull, as if the
	// caller's principal were registered with RegisterPullTimeUpdateExclusion.
	PullTimeExcluded bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logf receives one line per unroutable request. Default log.Printf.
	Logf func(format string, args ...any)
}

// Image is an image to seed, and what Image returns.
type Image struct {
	Digest    string // sha256:<64 hex>; required
	Tags      []string
	PushedAt  time.Time // default: the fake's clock at AddImage
	LastPull  time.Time // zero: never pulled
	SizeBytes int64
	MediaType string // default MediaTypeOCIManifest
	// Manifest is the body BatchGetImage returns. Empty for a manifest: a
	// small body is made up on request. An index needs its body (see NewIndex):
	// its manifests[].digest are the children that protect against deletion.
	Manifest string
}

// Digest returns a deterministic sha256 digest for a seed string.
func Digest(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewManifest returns a single-platform OCI image manifest whose digest is the
// sha256 of its body, built like the image-spec examples.
func NewManifest(seed string, pushed time.Time, tags ...string) Image {
	body := manifestBody(MediaTypeOCIManifest, Digest("config:"+seed), Digest("layer:"+seed))
	return Image{
		Digest:    Digest(body),
		Tags:      tags,
		PushedAt:  pushed,
		SizeBytes: 32654 + int64(len(seed)),
		MediaType: MediaTypeOCIManifest,
		Manifest:  body,
	}
}

// NewIndex returns an OCI image index listing children (platform manifests,
// attestations) by digest; its digest is the sha256 of its body.
func NewIndex(pushed time.Time, children []string, tags ...string) Image {
	return newIndex(MediaTypeOCIIndex, MediaTypeOCIManifest, pushed, children, tags)
}

// NewDockerList is NewIndex with Docker manifest list media types.
func NewDockerList(pushed time.Time, children []string, tags ...string) Image {
	return newIndex(MediaTypeDockerList, MediaTypeDockerManifest, pushed, children, tags)
}

var platforms = [][2]string{{"amd64", "linux"}, {"arm64", "linux"}, {"ppc64le", "linux"}, {"s390x", "linux"}}

func newIndex(mt, childMT string, pushed time.Time, children []string, tags []string) Image {
	type platform struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
	}
	type desc struct {
		MediaType string    `json:"mediaType"`
		Digest    string    `json:"digest"`
		Size      int       `json:"size"`
		Platform  *platform `json:"platform,omitempty"`
	}
	idx := struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		Manifests     []desc `json:"manifests"`
	}{SchemaVersion: 2, MediaType: mt, Manifests: []desc{}}
	for i, c := range children {
		p := platforms[i%len(platforms)]
		idx.Manifests = append(idx.Manifests, desc{MediaType: childMT, Digest: c, Size: 7143 + i, Platform: &platform{p[0], p[1]}})
	}
	b, _ := json.MarshalIndent(idx, "", "  ")
	return Image{
		Digest:    Digest(string(b)),
		Tags:      tags,
		PushedAt:  pushed,
		SizeBytes: 7143,
		MediaType: mt,
		Manifest:  string(b),
	}
}

func manifestBody(mt, config, layer string) string {
	cfgMT := "application/vnd.oci.image.config.v1+json"
	layerMT := "application/vnd.oci.image.layer.v1.tar+gzip"
	if mt == MediaTypeDockerManifest {
		cfgMT = "application/vnd.docker.container.image.v1+json"
		layerMT = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	}
	return `{
  "schemaVersion": 2,
  "mediaType": "` + mt + `",
  "config": {
    "mediaType": "` + cfgMT + `",
    "digest": "` + config + `",
    "size": 7023
  },
  "layers": [
    {
      "mediaType": "` + layerMT + `",
      "digest": "` + layer + `",
      "size": 32654
    }
  ]
}`
}

// children parses an index body's manifests[].digest.
func children(body string) ([]string, error) {
	var idx struct {
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(body), &idx); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(idx.Manifests))
	for _, m := range idx.Manifests {
		out = append(out, m.Digest)
	}
	return out, nil
}

type image struct {
	Image
	children []string // of an index
	deleted  bool
}

func (a *image) less(b *image) bool {
	if !a.PushedAt.Equal(b.PushedAt) {
		return a.PushedAt.Before(b.PushedAt)
	}
	return a.Digest < b.Digest
}

type repository struct {
	account  string
	name     string
	created  time.Time
	tags     map[string]string
	policy   string   // the repository policy's JSON; "" none
	images   []*image // sorted by (PushedAt, Digest) unless dirty; may hold deleted ones
	dirty    bool
	nDeleted int
	byDigest map[string]*image
	byTag    map[string]*image
	parents  map[string]int // child digest -> present indexes listing it
}

// sorted returns the live images in (PushedAt, Digest) order, compacting and
// sorting lazily so that bulk seeding and deletes stay cheap.
func (r *repository) sorted() []*image {
	if r.nDeleted > 0 {
		live := r.images[:0]
		for _, im := range r.images {
			if !im.deleted {
				live = append(live, im)
			}
		}
		clear(r.images[len(live):])
		r.images = live
		r.nDeleted = 0
	}
	if r.dirty {
		slices.SortFunc(r.images, func(a, b *image) int {
			if a.less(b) {
				return -1
			}
			if b.less(a) {
				return 1
			}
			return 0
		})
		r.dirty = false
	}
	return r.images
}

type registry struct {
	repos map[string]*repository
	names []string // sorted lazily
	dirty bool
}

func (g *registry) sortedNames() []string {
	if g.dirty {
		g.names = g.names[:0]
		for n := range g.repos {
			g.names = append(g.names, n)
		}
		sort.Strings(g.names)
		g.dirty = false
	}
	return g.names
}

type fault struct {
	code, message string
	n             int
}

type deleteFault struct{ code, reason string }

// Server is the fake ECR API.
type Server struct {
	// Counter counts requests by operation (Calls, CallCounts, TotalCalls,
	// MutatingCalls, ResetCalls).
	fakeapi.Counter
	// Buckets are the operations' rate limits, "*" the one they share
	// (SetRate, Throttled).
	fakeapi.Buckets

	mu           sync.Mutex
	opts         Options
	registries   map[string]*registry
	faults       map[string][]*fault // op -> queue
	deleteFaults map[string]deleteFault
	latency      time.Duration
	reqID        atomic.Uint64
	// registryPolicies are the registries' permissions policies, by account.
	registryPolicies map[string]string

	// Listener serves it locally (Start, URL, Close).
	fakeapi.Listener
}

// New returns a fake that is not listening: it is an http.Handler. Start it
// with Start (or serve it yourself).
func New(opts Options) *Server {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	s := &Server{
		opts:         opts,
		registries:   map[string]*registry{},
		faults:       map[string][]*fault{},
		deleteFaults: map[string]deleteFault{},
		latency:      opts.Latency,
	}
	for op, rl := range opts.Rates {
		s.SetRate(op, rl)
	}
	return s
}

// NewServer returns a fake listening on a local httptest server.
func NewServer(opts Options) *Server {
	s := New(opts)
	s.Start()
	return s
}

// Start starts serving on a local httptest server (once).
func (s *Server) Start() { s.Listener.Start(s) }

// Region is the region the fake serves.
func (s *Server) Region() string { return s.opts.Region }

// SetLatency changes the per-request latency.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// SetOnRequest replaces the OnRequest hook.
func (s *Server) SetOnRequest(fn func(op string)) {
	s.mu.Lock()
	s.opts.OnRequest = fn
	s.mu.Unlock()
}

// RepositoryARN is the ARN ListTagsForResource takes for a repository.
func (s *Server) RepositoryARN(account, name string) string {
	return "arn:" + partition(s.opts.Region) + ":ecr:" + s.opts.Region + ":" + account + ":repository/" + name
}

func partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

func (s *Server) registry(account string) *registry {
	g := s.registries[account]
	if g == nil {
		g = &registry{repos: map[string]*repository{}}
		s.registries[account] = g
	}
	return g
}

func (s *Server) repo(account, name string) *repository {
	if g := s.registries[account]; g != nil {
		return g.repos[name]
	}
	return nil
}

// AddRepository creates a repository (or replaces its creation time and
// resource tags if it exists). created zero means the fake's clock now.
func (s *Server) AddRepository(account, name string, created time.Time, tags map[string]string) {
	if account == "" || name == "" {
		panic("ecrfake.AddRepository: need an account and a name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if created.IsZero() {
		created = s.opts.Now()
	}
	g := s.registry(account)
	if r := g.repos[name]; r != nil {
		r.created, r.tags = created, maps.Clone(tags)
		return
	}
	g.repos[name] = &repository{
		account:  account,
		name:     name,
		created:  created,
		tags:     maps.Clone(tags),
		byDigest: map[string]*image{},
		byTag:    map[string]*image{},
		parents:  map[string]int{},
	}
	g.names = append(g.names, name)
	g.dirty = true
}

// SetRepositoryTags replaces a repository's resource tags.
func (s *Server) SetRepositoryTags(account, name string, tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repo(account, name); r != nil {
		r.tags = maps.Clone(tags)
	}
}

// SetRepositoryPolicy sets a repository's policy (JSON; "" removes it).
func (s *Server) SetRepositoryPolicy(account, name, policy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repo(account, name); r != nil {
		r.policy = policy
	}
}

// SetRegistryPolicy sets the registry's permissions policy (JSON; "" none).
func (s *Server) SetRegistryPolicy(account, policy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.registryPolicies == nil {
		s.registryPolicies = map[string]string{}
	}
	s.registryPolicies[account] = policy
}

// RemoveRepository deletes a repository and its images out of band.
func (s *Server) RemoveRepository(account, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.registries[account]
	if g == nil || g.repos[name] == nil {
		return false
	}
	delete(g.repos, name)
	g.dirty = true
	return true
}

// AddImage seeds one image into an existing repository (see AddImages).
func (s *Server) AddImage(account, repo string, img Image) {
	s.AddImages(account, repo, []Image{img})
}

// AddImages seeds images into an existing repository. An image with a digest
// already present replaces it; a tag already on another image moves, as a push
// to a mutable repository does. An index's Manifest lists its children; one
// that does not parse is served as is and protects nothing. Cost is O(len(imgs)); sorting is deferred to the first read.
func (s *Server) AddImages(account, repo string, imgs []Image) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(account, repo)
	if r == nil {
		panic(fmt.Sprintf("ecrfake.AddImages: no repository %s/%s (AddRepository first)", account, repo))
	}
	now := s.opts.Now()
	for _, in := range imgs {
		if !strings.HasPrefix(in.Digest, "sha256:") {
			panic(fmt.Sprintf("ecrfake.AddImages: digest %q: want sha256:<hex>", in.Digest))
		}
		if in.PushedAt.IsZero() {
			in.PushedAt = now
		}
		if in.MediaType == "" {
			in.MediaType = MediaTypeOCIManifest
		}
		in.Tags = slices.Clone(in.Tags)
		im := &image{Image: in}
		if isIndex(in.MediaType) {
			// An unparseable body (to test readers) lists no children.
			im.children, _ = children(in.Manifest)
		}
		if old := r.byDigest[in.Digest]; old != nil {
			r.remove(old)
		}
		for _, t := range im.Tags {
			if other := r.byTag[t]; other != nil {
				other.Tags = slices.DeleteFunc(other.Tags, func(x string) bool { return x == t })
			}
			r.byTag[t] = im
		}
		if n := len(r.images); n > 0 && !r.dirty && im.less(r.images[n-1]) {
			r.dirty = true
		}
		r.images = append(r.images, im)
		r.byDigest[in.Digest] = im
		for _, c := range im.children {
			r.parents[c]++
		}
	}
}

// remove deletes an image from the repository's indexes; the caller holds the lock.
func (r *repository) remove(im *image) {
	if im.deleted {
		return
	}
	im.deleted = true
	r.nDeleted++
	delete(r.byDigest, im.Digest)
	for _, t := range im.Tags {
		if r.byTag[t] == im {
			delete(r.byTag, t)
		}
	}
	for _, c := range im.children {
		if r.parents[c]--; r.parents[c] <= 0 {
			delete(r.parents, c)
		}
	}
}

// RemoveImage deletes an image out of band (no checks, no counters).
func (s *Server) RemoveImage(account, repo, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(account, repo)
	if r == nil || r.byDigest[digest] == nil {
		return false
	}
	r.remove(r.byDigest[digest])
	return true
}

// Images returns the digests in a repository, oldest push first.
func (s *Server) Images(account, repo string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(account, repo)
	if r == nil {
		return nil
	}
	var out []string
	for _, im := range r.sorted() {
		out = append(out, im.Digest)
	}
	return out
}

// Has reports whether the repository holds an image with this digest.
func (s *Server) Has(account, repo, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(account, repo)
	return r != nil && r.byDigest[digest] != nil
}

// Image returns a copy of an image.
func (s *Server) Image(account, repo, digest string) (Image, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(account, repo)
	if r == nil || r.byDigest[digest] == nil {
		return Image{}, false
	}
	im := r.byDigest[digest].Image
	im.Tags = slices.Clone(im.Tags)
	return im, true
}

// Repositories returns an account's repository names, sorted.
func (s *Server) Repositories(account string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.registries[account]
	if g == nil {
		return nil
	}
	return slices.Clone(g.sortedNames())
}

// FailNext makes the next n requests of op ("*": any operation) answer with
// this error code instead of being handled (after counting and rate
// limiting). ServerException answers 500, every other code 400; the message is
// what real ECR says for the code where known (AccessDeniedException names the
// missing ecr: action). Faults queue up.
func (s *Server) FailNext(op, code string, n int) {
	s.FailNextMessage(op, code, "", n)
}

// FailNextMessage is FailNext with an explicit message.
func (s *Server) FailNextMessage(op, code, message string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], &fault{code: code, message: message, n: n})
}

// FailDelete makes BatchDeleteImage report this image in failures[] with code
// and reason (instead of deleting it) on every request until cleared with an
// empty code. reason "" gets a generic text.
func (s *Server) FailDelete(account, repo, digest, code, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := account + "\x00" + repo + "\x00" + digest
	if code == "" {
		delete(s.deleteFaults, k)
		return
	}
	if reason == "" {
		reason = "ecrfake injected " + code
	}
	s.deleteFaults[k] = deleteFault{code: code, reason: reason}
}

// ResetCalls zeroes the counters (and the throttle count).
func (s *Server) ResetCalls() {
	s.Counter.ResetCalls()
	s.ResetThrottled()
}

// ---- wire ----

// epoch renders a timestamp as awsJson1_1 does: a JSON number of epoch
// seconds, with milliseconds as a fraction when there are any.
type epoch time.Time

func (e epoch) IsZero() bool { return time.Time(e).IsZero() }

func (e epoch) MarshalJSON() ([]byte, error) {
	ms := time.Time(e).UnixMilli()
	if ms%1000 == 0 {
		return strconv.AppendInt(nil, ms/1000, 10), nil
	}
	return strconv.AppendFloat(nil, float64(ms)/1000, 'f', -1, 64), nil
}

type imageID struct {
	ImageDigest string `json:"imageDigest,omitempty"`
	ImageTag    string `json:"imageTag,omitempty"`
}

type request struct {
	RegistryID      string    `json:"registryId"`
	RepositoryName  string    `json:"repositoryName"`
	RepositoryNames []string  `json:"repositoryNames"`
	ImageIDs        []imageID `json:"imageIds"`
	NextToken       *string   `json:"nextToken"`
	MaxResults      *int      `json:"maxResults"`
	Filter          *struct {
		TagStatus string `json:"tagStatus"`
	} `json:"filter"`
	AcceptedMediaTypes []string `json:"acceptedMediaTypes"`
	ResourceArn        string   `json:"resourceArn"`
}

type imageDetail struct {
	RegistryID             string   `json:"registryId"`
	RepositoryName         string   `json:"repositoryName"`
	ImageDigest            string   `json:"imageDigest"`
	ImageTags              []string `json:"imageTags,omitempty"`
	ImageSizeInBytes       int64    `json:"imageSizeInBytes"`
	ImagePushedAt          epoch    `json:"imagePushedAt"`
	ImageManifestMediaType string   `json:"imageManifestMediaType"`
	ArtifactMediaType      string   `json:"artifactMediaType,omitempty"`
	LastRecordedPullTime   epoch    `json:"lastRecordedPullTime,omitzero"`
	ImageStatus            string   `json:"imageStatus"`
}

type failure struct {
	ImageID       imageID `json:"imageId"`
	FailureCode   string  `json:"failureCode"`
	FailureReason string  `json:"failureReason"`
}

type apiError struct {
	status  int
	code    string
	message string
}

func errorf(code, format string, args ...any) *apiError {
	st := http.StatusBadRequest
	if code == CodeServer {
		st = http.StatusInternalServerError
	}
	return &apiError{status: st, code: code, message: fmt.Sprintf(format, args...)}
}

func (s *Server) requestID() string {
	n := s.reqID.Add(1)
	return fmt.Sprintf("ecrfake-%08x-%04x-4000-8000-%012x", uint32(n>>16), uint16(n), n)
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"__type":"ServerException","message":"ecrfake: encode: `+strings.ReplaceAll(err.Error(), `"`, `'`)+`"}`)
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("x-amzn-RequestId", s.requestID())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) writeError(w http.ResponseWriter, e *apiError) {
	s.writeJSON(w, e.status, map[string]string{"__type": e.code, "message": e.message})
}

// checkAuth accepts a SigV4 Authorization header scoped to the fake's region
// and service ecr. It does not verify the signature.
func (s *Server) checkAuth(req *http.Request) *apiError {
	a := req.Header.Get("Authorization")
	if a == "" {
		return errorf(CodeMissingAuthentication, "Missing Authentication Token")
	}
	if !strings.HasPrefix(a, fakeapi.SigV4Scheme+" ") {
		return errorf(CodeInvalidSignature, "Authorization header requires 'AWS4-HMAC-SHA256' signature (ecrfake got %q)", strings.SplitN(a, " ", 2)[0])
	}
	region, service, ok := fakeapi.SigV4Scope(a)
	if !ok {
		return errorf(CodeInvalidSignature, "Authorization header requires a valid 'Credential' parameter")
	}
	if region != s.opts.Region {
		return errorf(CodeInvalidSignature, "Credential should be scoped to a valid region. (ecrfake serves %s, request signed for %s)", s.opts.Region, region)
	}
	if service != "ecr" {
		return errorf(CodeInvalidSignature, "Credential should be scoped to correct service: 'ecr'. ")
	}
	if req.Header.Get("X-Amz-Date") == "" {
		return errorf(CodeMissingAuthentication, "Missing Authentication Token: no X-Amz-Date")
	}
	return nil
}

var knownOps = map[string]bool{
	OpDescribeRepositories: true, OpDescribeImages: true, OpListImages: true,
	OpBatchGetImage: true, OpBatchDeleteImage: true, OpListTagsForResource: true,
	OpGetRepositoryPolicy: true, OpGetRegistryPolicy: true,
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), TargetPrefix)
	routed := ok && knownOps[op] && req.Method == http.MethodPost && req.URL.Path == "/"
	s.mu.Lock()
	s.Route(op, routed, op == OpBatchDeleteImage) // only BatchDeleteImage mutates
	fakeapi.Saw(Permission(op))
	latency := s.latency
	hook := s.opts.OnRequest
	logf := s.opts.Logf
	s.mu.Unlock()

	if !fakeapi.Delay(req.Context(), latency) {
		return
	}
	if !routed {
		logf("ecrfake: no route for %s %s X-Amz-Target=%q", req.Method, req.URL.Path, req.Header.Get("X-Amz-Target"))
		s.writeError(w, errorf(CodeUnknownOperation, "ecrfake: unknown operation %q (%s %s)", req.Header.Get("X-Amz-Target"), req.Method, req.URL.Path))
		return
	}
	if e := s.checkAuth(req); e != nil {
		s.writeError(w, e)
		return
	}
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, ContentType) {
		s.writeError(w, errorf(CodeSerialization, "ecrfake: Content-Type %q, want %s", ct, ContentType))
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	var in request
	if err := json.Unmarshal(body, &in); err != nil {
		s.writeError(w, errorf(CodeSerialization, "ecrfake: request body: %v", err))
		return
	}
	if in.RegistryID == "" {
		in.RegistryID = DefaultAccount
	}

	if !s.Allow(op, "*") {
		s.writeError(w, errorf(CodeThrottling, "Rate exceeded"))
		return
	}
	s.mu.Lock()
	var f *fault
	for _, k := range []string{op, "*"} {
		if q := s.faults[k]; len(q) > 0 {
			f = q[0]
			if f.n--; f.n <= 0 {
				s.faults[k] = q[1:]
			}
			break
		}
	}
	s.mu.Unlock()

	if f != nil {
		s.writeError(w, s.faultError(op, in, f))
		return
	}
	if hook != nil {
		hook(op)
	}

	var out any
	var e *apiError
	s.mu.Lock()
	switch op {
	case OpDescribeRepositories:
		out, e = s.describeRepositories(in)
	case OpDescribeImages:
		out, e = s.describeImages(in)
	case OpListImages:
		out, e = s.listImages(in)
	case OpBatchGetImage:
		out, e = s.batchGetImage(in)
	case OpBatchDeleteImage:
		out, e = s.batchDeleteImage(in)
	case OpListTagsForResource:
		out, e = s.listTags(in)
	case OpGetRepositoryPolicy:
		out, e = s.getRepositoryPolicy(in)
	case OpGetRegistryPolicy:
		out, e = s.getRegistryPolicy(in)
	}
	s.mu.Unlock()
	if e != nil {
		s.writeError(w, e)
		return
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) faultError(op string, in request, f *fault) *apiError {
	msg := f.message
	if msg == "" {
		resource := "arn:" + partition(s.opts.Region) + ":ecr:" + s.opts.Region + ":" + in.RegistryID + ":repository/" + in.RepositoryName
		if in.RepositoryName == "" {
			resource = "arn:" + partition(s.opts.Region) + ":ecr:" + s.opts.Region + ":" + in.RegistryID + ":repository/*"
		}
		switch f.code {
		case CodeThrottling:
			msg = "Rate exceeded"
		case CodeServer:
			msg = "We encountered an internal error. Please try again."
		case CodeAccessDenied:
			msg = fmt.Sprintf("User: arn:aws:sts::%s:assumed-role/reclaim/ecrfake is not authorized to perform: ecr:%s on resource: %s because no identity-based policy allows the ecr:%s action",
				in.RegistryID, op, resource, op)
		case CodeRepositoryNotFound:
			msg = repoNotFoundMsg(in.RegistryID, in.RepositoryName)
		default:
			msg = "ecrfake injected " + f.code
		}
	}
	return errorf(f.code, "%s", msg)
}

func repoNotFoundMsg(account, name string) string {
	return fmt.Sprintf("The repository with name '%s' does not exist in the registry with id '%s'", name, account)
}

func (s *Server) lookupRepo(in request) (*repository, *apiError) {
	if in.RepositoryName == "" {
		return nil, errorf(CodeInvalidParameter, "Invalid parameter at 'repositoryName' failed to satisfy constraint: 'Member must not be null'")
	}
	r := s.repo(in.RegistryID, in.RepositoryName)
	if r == nil {
		return nil, errorf(CodeRepositoryNotFound, "%s", repoNotFoundMsg(in.RegistryID, in.RepositoryName))
	}
	return r, nil
}

func checkIDs(ids []imageID) *apiError {
	if len(ids) > MaxImageIDs {
		return errorf(CodeInvalidParameter, "Invalid parameter at 'imageIds' failed to satisfy constraint: 'Member must have length less than or equal to 100'")
	}
	if len(ids) == 0 {
		return errorf(CodeInvalidParameter, "Invalid parameter at 'imageIds' failed to satisfy constraint: 'Member must have length greater than or equal to 1'")
	}
	return nil
}

func pageSize(in request) (int, *apiError) {
	if in.MaxResults == nil {
		return DefaultPageSize, nil
	}
	n := *in.MaxResults
	if n < 1 {
		return 0, errorf(CodeInvalidParameter, "Invalid parameter at 'maxResults' failed to satisfy constraint: 'Member must have value greater than or equal to 1'")
	}
	if n > MaxPageSize {
		return 0, errorf(CodeInvalidParameter, "Invalid parameter at 'maxResults' failed to satisfy constraint: 'Member must have value less than or equal to 1000'")
	}
	return n, nil
}

// Tokens are opaque to clients; they name the sort key of the last item
// returned, so a page resumes correctly after deletes and costs O(page).
func imageToken(im *image) string {
	return base64.RawURLEncoding.EncodeToString([]byte("i|" + strconv.FormatInt(im.PushedAt.UnixNano(), 10) + "|" + im.Digest))
}

func parseImageToken(tok string) (*image, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, false
	}
	p := strings.SplitN(string(b), "|", 3)
	if len(p) != 3 || p[0] != "i" {
		return nil, false
	}
	ns, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil {
		return nil, false
	}
	return &image{Image: Image{PushedAt: time.Unix(0, ns), Digest: p[2]}}, true
}

func badToken() *apiError {
	return errorf(CodeInvalidParameter, "Invalid parameter at 'nextToken' failed to satisfy constraint: 'Invalid NextToken'")
}

// page returns images after the token, up to n matching the tag filter, and
// the next token.
func page(r *repository, in request, n int) ([]*image, string, *apiError) {
	status := "ANY"
	if in.Filter != nil && in.Filter.TagStatus != "" {
		status = in.Filter.TagStatus
		if status != "ANY" && status != "TAGGED" && status != "UNTAGGED" {
			return nil, "", errorf(CodeInvalidParameter, "Invalid parameter at 'filter.tagStatus' failed to satisfy enum value set: [TAGGED, UNTAGGED, ANY]")
		}
	}
	all := r.sorted()
	start := 0
	if in.NextToken != nil {
		after, ok := parseImageToken(*in.NextToken)
		if !ok {
			return nil, "", badToken()
		}
		start = sort.Search(len(all), func(i int) bool { return after.less(all[i]) })
	}
	var out []*image
	i := start
	for ; i < len(all) && len(out) < n; i++ {
		im := all[i]
		if (status == "TAGGED" && len(im.Tags) == 0) || (status == "UNTAGGED" && len(im.Tags) > 0) {
			continue
		}
		out = append(out, im)
	}
	next := ""
	if i < len(all) && i > 0 {
		next = imageToken(all[i-1])
	}
	return out, next, nil
}

func (s *Server) detail(r *repository, im *image) imageDetail {
	d := imageDetail{
		RegistryID:             r.account,
		RepositoryName:         r.name,
		ImageDigest:            im.Digest,
		ImageTags:              im.Tags,
		ImageSizeInBytes:       im.SizeBytes,
		ImagePushedAt:          epoch(im.PushedAt),
		ImageManifestMediaType: im.MediaType,
		LastRecordedPullTime:   epoch(im.LastPull),
		ImageStatus:            "ACTIVE",
	}
	switch im.MediaType {
	case MediaTypeOCIManifest:
		d.ArtifactMediaType = "application/vnd.oci.image.config.v1+json"
	case MediaTypeDockerManifest:
		d.ArtifactMediaType = "application/vnd.docker.container.image.v1+json"
	}
	return d
}

func (r *repository) find(id imageID) *image {
	var im *image
	if id.ImageDigest != "" {
		im = r.byDigest[id.ImageDigest]
		if im != nil && id.ImageTag != "" && !slices.Contains(im.Tags, id.ImageTag) {
			return nil
		}
		return im
	}
	if id.ImageTag != "" {
		return r.byTag[id.ImageTag]
	}
	return nil
}

func imageNotFoundMsg(r *repository, id imageID) string {
	tag, dig := "null", "null"
	if id.ImageTag != "" {
		tag = id.ImageTag
	}
	if id.ImageDigest != "" {
		dig = id.ImageDigest
	}
	return fmt.Sprintf("The image with imageId {imageDigest:'%s', imageTag:'%s'} does not exist within the repository with name '%s' in the registry with id '%s'",
		dig, tag, r.name, r.account)
}

func (s *Server) describeImages(in request) (any, *apiError) {
	r, e := s.lookupRepo(in)
	if e != nil {
		return nil, e
	}
	type resp struct {
		ImageDetails []imageDetail `json:"imageDetails"`
		NextToken    string        `json:"nextToken,omitempty"`
	}
	if in.ImageIDs != nil {
		if in.MaxResults != nil || in.NextToken != nil {
			return nil, errorf(CodeInvalidParameter, "Invalid parameter: maxResults and nextToken cannot be used when imageIds are specified")
		}
		if e := checkIDs(in.ImageIDs); e != nil {
			return nil, e
		}
		out := resp{ImageDetails: []imageDetail{}}
		seen := map[string]bool{}
		for _, id := range in.ImageIDs {
			im := r.find(id)
			if im == nil {
				return nil, errorf(CodeImageNotFound, "%s", imageNotFoundMsg(r, id))
			}
			if !seen[im.Digest] {
				seen[im.Digest] = true
				out.ImageDetails = append(out.ImageDetails, s.detail(r, im))
			}
		}
		return out, nil
	}
	n, e := pageSize(in)
	if e != nil {
		return nil, e
	}
	ims, next, e := page(r, in, n)
	if e != nil {
		return nil, e
	}
	out := resp{ImageDetails: make([]imageDetail, 0, len(ims)), NextToken: next}
	for _, im := range ims {
		out.ImageDetails = append(out.ImageDetails, s.detail(r, im))
	}
	return out, nil
}

func (s *Server) listImages(in request) (any, *apiError) {
	r, e := s.lookupRepo(in)
	if e != nil {
		return nil, e
	}
	n, e := pageSize(in)
	if e != nil {
		return nil, e
	}
	ims, next, e := page(r, in, n)
	if e != nil {
		return nil, e
	}
	type resp struct {
		ImageIDs  []imageID `json:"imageIds"`
		NextToken string    `json:"nextToken,omitempty"`
	}
	out := resp{ImageIDs: []imageID{}, NextToken: next}
	for _, im := range ims {
		if len(im.Tags) == 0 {
			out.ImageIDs = append(out.ImageIDs, imageID{ImageDigest: im.Digest})
		}
		for _, t := range im.Tags {
			out.ImageIDs = append(out.ImageIDs, imageID{ImageDigest: im.Digest, ImageTag: t})
		}
	}
	return out, nil
}

func (s *Server) describeRepositories(in request) (any, *apiError) {
	type repoJSON struct {
		CreatedAt          epoch  `json:"createdAt"`
		ImageTagMutability string `json:"imageTagMutability"`
		RegistryID         string `json:"registryId"`
		RepositoryArn      string `json:"repositoryArn"`
		RepositoryName     string `json:"repositoryName"`
		RepositoryURI      string `json:"repositoryUri"`
	}
	type resp struct {
		Repositories []repoJSON `json:"repositories"`
		NextToken    string     `json:"nextToken,omitempty"`
	}
	g := s.registries[in.RegistryID]
	if g == nil {
		g = &registry{repos: map[string]*repository{}}
	}
	host := in.RegistryID + ".dkr.ecr." + s.opts.Region + ".amazonaws.com"
	if strings.HasPrefix(s.opts.Region, "cn-") {
		host += ".cn"
	}
	conv := func(r *repository) repoJSON {
		return repoJSON{
			CreatedAt: epoch(r.created), ImageTagMutability: "MUTABLE", RegistryID: r.account,
			RepositoryArn: s.RepositoryARN(r.account, r.name), RepositoryName: r.name, RepositoryURI: host + "/" + r.name,
		}
	}
	out := resp{Repositories: []repoJSON{}}
	if in.RepositoryNames != nil {
		if in.MaxResults != nil || in.NextToken != nil {
			return nil, errorf(CodeInvalidParameter, "Invalid parameter: maxResults and nextToken cannot be used when repositoryNames are specified")
		}
		if len(in.RepositoryNames) == 0 || len(in.RepositoryNames) > 100 {
			return nil, errorf(CodeInvalidParameter, "Invalid parameter at 'repositoryNames' failed to satisfy constraint: 'Member must have length less than or equal to 100'")
		}
		for _, n := range in.RepositoryNames {
			r := g.repos[n]
			if r == nil {
				return nil, errorf(CodeRepositoryNotFound, "%s", repoNotFoundMsg(in.RegistryID, n))
			}
			out.Repositories = append(out.Repositories, conv(r))
		}
		return out, nil
	}
	n, e := pageSize(in)
	if e != nil {
		return nil, e
	}
	names := g.sortedNames()
	start := 0
	if in.NextToken != nil {
		b, err := base64.RawURLEncoding.DecodeString(*in.NextToken)
		after, ok := strings.CutPrefix(string(b), "r|")
		if err != nil || !ok {
			return nil, badToken()
		}
		start = sort.SearchStrings(names, after)
		if start < len(names) && names[start] == after {
			start++
		}
	}
	end := min(start+n, len(names))
	for _, name := range names[start:end] {
		out.Repositories = append(out.Repositories, conv(g.repos[name]))
	}
	if end < len(names) && end > 0 {
		out.NextToken = base64.RawURLEncoding.EncodeToString([]byte("r|" + names[end-1]))
	}
	return out, nil
}

func (s *Server) batchGetImage(in request) (any, *apiError) {
	r, e := s.lookupRepo(in)
	if e != nil {
		return nil, e
	}
	if e := checkIDs(in.ImageIDs); e != nil {
		return nil, e
	}
	if len(in.AcceptedMediaTypes) > 100 {
		return nil, errorf(CodeInvalidParameter, "Invalid parameter at 'acceptedMediaTypes' failed to satisfy constraint: 'Member must have length less than or equal to 100'")
	}
	type imageJSON struct {
		RegistryID             string  `json:"registryId"`
		RepositoryName         string  `json:"repositoryName"`
		ImageID                imageID `json:"imageId"`
		ImageManifest          string  `json:"imageManifest"`
		ImageManifestMediaType string  `json:"imageManifestMediaType"`
	}
	type resp struct {
		Images   []imageJSON `json:"images"`
		Failures []failure   `json:"failures"`
	}
	out := resp{Images: []imageJSON{}, Failures: []failure{}}
	now := s.opts.Now()
	for _, id := range in.ImageIDs {
		if id.ImageDigest == "" && id.ImageTag == "" {
			out.Failures = append(out.Failures, failure{ImageID: id, FailureCode: FailureMissingDigestAndTag, FailureReason: "Invalid request parameters: both tag and digest cannot be null"})
			continue
		}
		im := r.find(id)
		if im == nil {
			out.Failures = append(out.Failures, failure{ImageID: id, FailureCode: FailureImageNotFound, FailureReason: "Requested image not found"})
			continue
		}
		mt, body := im.MediaType, im.Manifest
		if len(in.AcceptedMediaTypes) > 0 && !slices.Contains(in.AcceptedMediaTypes, mt) && isIndex(mt) && len(im.children) > 0 {
			// Real ECR answers an index the caller did not accept with one of
			// its platform manifests (issue: "ECR may convert manifest lists").
			child := r.byDigest[im.children[0]]
			mt = MediaTypeOCIManifest
			body = ""
			if child != nil {
				mt, body = child.MediaType, child.Manifest
			}
			if body == "" {
				body = manifestBody(mt, Digest("config:"+im.children[0]), Digest("layer:"+im.children[0]))
			}
		} else if body == "" {
			body = manifestBody(mt, Digest("config:"+im.Digest), Digest("layer:"+im.Digest))
		}
		out.Images = append(out.Images, imageJSON{
			RegistryID: r.account, RepositoryName: r.name,
			ImageID:       imageID{ImageDigest: im.Digest, ImageTag: id.ImageTag},
			ImageManifest: body, ImageManifestMediaType: mt,
		})
		if !s.opts.PullTimeExcluded {
			im.LastPull = now
		}
	}
	return out, nil
}

func (s *Server) batchDeleteImage(in request) (any, *apiError) {
	r, e := s.lookupRepo(in)
	if e != nil {
		return nil, e
	}
	if e := checkIDs(in.ImageIDs); e != nil {
		return nil, e
	}
	type resp struct {
		ImageIDs []imageID `json:"imageIds"`
		Failures []failure `json:"failures"`
	}
	out := resp{ImageIDs: []imageID{}, Failures: []failure{}}
	for _, id := range in.ImageIDs {
		fail := func(code, reason string) {
			out.Failures = append(out.Failures, failure{ImageID: id, FailureCode: code, FailureReason: reason})
		}
		if id.ImageDigest == "" && id.ImageTag == "" {
			fail(FailureMissingDigestAndTag, "Invalid request parameters: both tag and digest cannot be null")
			continue
		}
		if id.ImageDigest != "" && !validDigest(id.ImageDigest) {
			fail(FailureInvalidImageDigest, "Invalid request parameters: image digest should satisfy the regex '[a-zA-Z0-9-_+.]+:[a-fA-F0-9]+'")
			continue
		}
		im := r.find(id)
		if im == nil {
			fail(FailureImageNotFound, "Requested image not found")
			continue
		}
		if df, ok := s.deleteFaults[r.account+"\x00"+r.name+"\x00"+im.Digest]; ok {
			fail(df.code, df.reason)
			continue
		}
		byTagOnly := id.ImageDigest == "" && len(im.Tags) > 1
		if byTagOnly {
			// Deleting one of several tags only untags.
			im.Tags = slices.DeleteFunc(im.Tags, func(t string) bool { return t == id.ImageTag })
			delete(r.byTag, id.ImageTag)
			out.ImageIDs = append(out.ImageIDs, imageID{ImageDigest: im.Digest, ImageTag: id.ImageTag})
			continue
		}
		if r.parents[im.Digest] > 0 {
			var idx []string
			for _, p := range r.byDigest {
				if slices.Contains(p.children, im.Digest) {
					idx = append(idx, p.Digest)
				}
			}
			sort.Strings(idx)
			fail(FailureImageReferencedByManifestList, "Requested image referenced by manifest list: ["+strings.Join(idx, ", ")+"]")
			continue
		}
		if len(im.Tags) == 0 {
			out.ImageIDs = append(out.ImageIDs, imageID{ImageDigest: im.Digest})
		}
		for _, t := range im.Tags {
			out.ImageIDs = append(out.ImageIDs, imageID{ImageDigest: im.Digest, ImageTag: t})
		}
		r.remove(im)
	}
	return out, nil
}

func validDigest(d string) bool {
	alg, hexPart, ok := strings.Cut(d, ":")
	if !ok || alg == "" || hexPart == "" {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// getRepositoryPolicy answers as ECR does: the policy text, or
// RepositoryPolicyNotFoundException when the repository has none.
func (s *Server) getRepositoryPolicy(in request) (any, *apiError) {
	r := s.repo(in.RegistryID, in.RepositoryName)
	if r == nil {
		return nil, errorf(CodeRepositoryNotFound, "%s", repoNotFoundMsg(in.RegistryID, in.RepositoryName))
	}
	if r.policy == "" {
		return nil, errorf(CodeRepoPolicyNotFound, "Repository policy does not exist for the repository with name '%s' in the registry with id '%s'", in.RepositoryName, in.RegistryID)
	}
	return map[string]string{"registryId": in.RegistryID, "repositoryName": in.RepositoryName, "policyText": r.policy}, nil
}

// getRegistryPolicy answers the registry's permissions policy, or
// RegistryPolicyNotFoundException. The request names no registry: it is
// the caller's (the fake's default account).
func (s *Server) getRegistryPolicy(in request) (any, *apiError) {
	p := s.registryPolicies[in.RegistryID]
	if p == "" {
		return nil, errorf(CodeRegistryPolicyNotFound, "Registry policy does not exist in the registry with id '%s'", in.RegistryID)
	}
	return map[string]string{"registryId": in.RegistryID, "policyText": p}, nil
}

func (s *Server) listTags(in request) (any, *apiError) {
	// arn:PARTITION:ecr:REGION:ACCOUNT:repository/NAME
	p := strings.SplitN(in.ResourceArn, ":", 6)
	if len(p) != 6 || p[0] != "arn" || p[2] != "ecr" || !strings.HasPrefix(p[5], "repository/") {
		return nil, errorf(CodeInvalidParameter, "Invalid parameter at 'resourceArn' failed to satisfy constraint: 'Invalid ARN %s'", in.ResourceArn)
	}
	if p[3] != s.opts.Region {
		return nil, errorf(CodeInvalidParameter, "Invalid parameter at 'resourceArn': region %s is not this endpoint's region %s", p[3], s.opts.Region)
	}
	account, name := p[4], strings.TrimPrefix(p[5], "repository/")
	r := s.repo(account, name)
	if r == nil {
		return nil, errorf(CodeRepositoryNotFound, "%s", repoNotFoundMsg(account, name))
	}
	type tag struct {
		Key   string `json:"Key"`
		Value string `json:"Value"`
	}
	out := struct {
		Tags []tag `json:"tags"`
	}{Tags: []tag{}}
	for _, k := range slices.Sorted(maps.Keys(r.tags)) {
		out.Tags = append(out.Tags, tag{k, r.tags[k]})
	}
	return out, nil
}
