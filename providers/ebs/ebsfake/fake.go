// Package ebsfake is a wire-level fake of the parts of Amazon EC2 and Service
// Quotas that reclaim's ebs provider uses: DescribeVolumes, DeleteVolume,
// CreateSnapshot, DescribeSnapshots, DeleteSnapshot and DescribeImages (EC2
// Query protocol) and ListServiceQuotas (awsJson1_1).
//
// One Server is one region and serves both APIs on one endpoint; it routes a
// request with an X-Amz-Target header to Service Quotas and any other to EC2.
// The real aws-sdk-go-v2 clients drive it through BaseEndpoint and static
// credentials.
//
// EC2, as ec2fake speaks it: POST / with a form-encoded body
// Action=…&Version=2016-11-15, list parameters as VolumeId.1, TagSpecification.1.Tag.1.Key;
// XML answers in the http://ec2.amazonaws.com/doc/2016-11-15/ namespace with
// <requestId>; errors as <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
// without a namespace, EC2's HTTP status per code (fakeapi.QueryStatus:
// RequestLimitExceeded and Unavailable 503, InternalError 500,
// UnauthorizedOperation 403, AuthFailure 401, others 400).
//
// Service Quotas: POST / with Content-Type application/x-amz-json-1.1 and
// X-Amz-Target ServiceQuotasV20190624.ListServiceQuotas, a JSON body
// {"ServiceCode","NextToken","MaxResults"} (MaxResults 1..100); answers
// {"Quotas":[…],"NextToken"}; errors {"__type":"AccessDeniedException","message":…}
// with HTTP 400 (500 for ServiceException).
//
// Requests need a SigV4 Authorization header scoped to the fake's region and
// to service ec2 or servicequotas (AuthFailure / UnrecognizedClientException
// otherwise). The signature is not checked. A request's account is the one
// Options.Accounts maps its access key id to, else Options.Account: several
// accounts can share one fake, each with its own volumes, snapshots and
// quotas.
//
// Behaviour that mirrors EC2 and matters to a garbage collector:
//   - DescribeVolumes takes MaxResults 5..500; as EC2's reference says, a
//     larger value returns pages of 500. Below 5 is InvalidParameterValue
//     (as EC2 answers for its other describes; the reference does not say).
//     MaxResults together with VolumeId.N is InvalidParameterCombination
//     ("You cannot specify this parameter and the volume IDs parameter in
//     the same request"). VolumeId.N with an id that does not exist fails the
//     whole call with InvalidVolume.NotFound.
//   - DeleteVolume answers InvalidVolume.NotFound for a missing volume,
//     VolumeInUse for an attached one and IncorrectState for one that is not
//     available (creating, deleting, error); a malformed id is
//     InvalidVolumeID.Malformed.
//   - CreateSnapshot records a pending snapshot with the tags of its
//     TagSpecification (ResourceType snapshot).
//   - DescribeSnapshots takes MaxResults 5..1000 (not with SnapshotId.N)
//     and pages by NextToken; an unknown SnapshotId.N is
//     InvalidSnapshot.NotFound. DeleteSnapshot answers InvalidSnapshot.NotFound
//     for a missing snapshot and InvalidSnapshot.InUse while an AMI
//     (AddImage) is registered from it. DescribeImages lists disabled AMIs
//     only with IncludeDisabled; DescribeVolumes takes the snapshot-id and
//     status filters.
//
// All methods are safe for concurrent use.
package ebsfake

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Operations, as in the Action parameter or the X-Amz-Target suffix; the keys of Calls.
const (
	OpDescribeVolumes   = "DescribeVolumes"
	OpDeleteVolume      = "DeleteVolume"
	OpCreateSnapshot    = "CreateSnapshot"
	OpDescribeSnapshots = "DescribeSnapshots"
	OpDeleteSnapshot    = "DeleteSnapshot"
	OpDescribeImages    = "DescribeImages"
	OpListRecycleBin    = "ListSnapshotsInRecycleBin"
	OpListServiceQuotas = "ListServiceQuotas"
	// OpUnknown counts requests the fake could not route.
	OpUnknown = fakeapi.Unknown
)

// Wire constants.
const (
	Version        = "2016-11-15"
	Namespace      = "http://ec2.amazonaws.com/doc/2016-11-15/"
	TargetPrefix   = "ServiceQuotasV20190624."
	DefaultAccount = "123456789012"
	MinPageSize    = 5
	MaxPageSize    = 500
	// MaxQuotaResults bounds ListServiceQuotas' MaxResults (1..100); it is
	// also the page size without one.
	MaxQuotaResults = 100
)

// Error codes the fake answers with.
const (
	CodeInternalError               = "InternalError"
	CodeRequestLimitExceeded        = "RequestLimitExceeded"
	CodeUnavailable                 = "Unavailable"
	CodeUnauthorizedOperation       = "UnauthorizedOperation"
	CodeAuthFailure                 = "AuthFailure"
	CodeInvalidAction               = "InvalidAction"
	CodeMissingParameter            = "MissingParameter"
	CodeNoSuchVersion               = "NoSuchVersion"
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
	CodeInvalidNextToken            = "InvalidNextToken"
	CodeVolumeNotFound              = "InvalidVolume.NotFound"
	CodeVolumeMalformed             = "InvalidVolumeID.Malformed"
	CodeVolumeInUse                 = "VolumeInUse"
	CodeIncorrectState              = "IncorrectState"
	CodeSnapshotNotFound            = "InvalidSnapshot.NotFound"
	CodeSnapshotMalformed           = "InvalidSnapshotID.Malformed"
	CodeSnapshotInUse               = "InvalidSnapshot.InUse"

	// Service Quotas' (JSON __type).
	CodeAccessDenied        = "AccessDeniedException"
	CodeNoSuchResource      = "NoSuchResourceException"
	CodeIllegalArgument     = "IllegalArgumentException"
	CodeInvalidPaginationTk = "InvalidPaginationTokenException"
	CodeTooManyRequests     = "TooManyRequestsException"
	CodeServiceException    = "ServiceException"
	CodeUnrecognizedClient  = "UnrecognizedClientException"
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Region is the region served; requests must be signed for it. Default us-east-1.
	Region string
	// Account is the account of requests whose access key Accounts does not
	// map, and of AddVolume("", …); default DefaultAccount.
	Account string
	// Accounts maps access key ids to accounts.
	Accounts map[string]string
	// Latency is added to every request before it is handled.
	Latency time.Duration
	// RecycleBin, when more than 0, is the retention of a Recycle Bin rule
	// covering every snapshot: DeleteSnapshot moves it to the bin, where
	// DescribeSnapshots no longer lists it and ListSnapshotsInRecycleBin does.
	RecycleBin time.Duration
	// SnapshotPolls is how many DescribeSnapshots answers show a new
	// snapshot pending before it is completed (0: completed at once).
	SnapshotPolls int
	// Logf receives one line per unroutable request. Default log.Printf.
	Logf func(format string, args ...any)
}

// Volume is a volume to seed (AddVolume) and what Volume returns.
type Volume struct {
	ID         string // vol-…; default made up
	AZ         string // default <region>a
	State      string // default available, in-use with Instances
	Type       string // default gp3
	SizeGiB    int64  // default 8
	Created    time.Time
	Tags       map[string]string
	Instances  []string // attached instances
	SnapshotID string
	// MultiAttach is multiAttachEnabled (io1/io2).
	MultiAttach bool
	Encrypted   bool
	Iops        int32
	Throughput  int32
}

// Snapshot is a snapshot CreateSnapshot recorded or AddSnapshot seeded.
type Snapshot struct {
	Account     string
	ID          string
	VolumeID    string
	Description string
	State       string // pending, completed, error
	Tags        map[string]string
	Started     time.Time
	// SizeGiB is the volume's size (volumeSize); StorageTier is standard
	// or archive.
	SizeGiB     int64
	StorageTier string
	polls       int
}

type quota struct {
	code, name, unit string
	value            float64
}

// Server is the fake.
type Server struct {
	// Counter counts requests by operation (Calls, CallCounts, TotalCalls,
	// MutatingCalls, ResetCalls).
	fakeapi.Counter
	// Injected holds the faults (FailNext, FailPage, FailPageMessage,
	// ClearFaults, LoseDeleteResponses).
	fakeapi.Injected

	mu        sync.Mutex
	opts      Options
	volumes   map[string]map[string]*Volume // account -> id -> volume
	snapshots []Snapshot
	recycled  []Snapshot         // in the Recycle Bin; Started is when it entered
	images    map[string][]Image // account -> images
	quotas    map[string][]quota // account -> quotas of service code ebs
	seq       atomic.Uint64

	// Listener serves it locally (Start, URL, Close).
	fakeapi.Listener
}

// New returns a fake that is not listening: it is an http.Handler.
func New(opts Options) *Server {
	opts.Region = cmp.Or(opts.Region, "us-east-1")
	opts.Account = cmp.Or(opts.Account, DefaultAccount)
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	opts.Accounts = maps.Clone(opts.Accounts)
	return &Server{opts: opts, volumes: map[string]map[string]*Volume{}, images: map[string][]Image{}, quotas: map[string][]quota{}}
}

// Start starts serving on a local httptest server (once).
func (s *Server) Start() { s.Listener.Start(s) }

// Region is the region served.
func (s *Server) Region() string { return s.opts.Region }

// ---- model ----

func (s *Server) account(a string) string {
	if a == "" {
		return s.opts.Account
	}
	return a
}

// AddVolume seeds a volume of account ("": Options.Account), replacing one
// of the same id, and returns its id.
func (s *Server) AddVolume(account string, v Volume) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	account = s.account(account)
	if v.ID == "" {
		v.ID = fmt.Sprintf("vol-%017x", s.seq.Add(1))
	}
	if !strings.HasPrefix(v.ID, "vol-") {
		panic(fmt.Sprintf("ebsfake.AddVolume: id %q: want vol-…", v.ID))
	}
	if v.AZ == "" {
		v.AZ = s.opts.Region + "a"
	}
	if v.Type == "" {
		v.Type = "gp3"
	}
	if v.SizeGiB == 0 {
		v.SizeGiB = 8
	}
	if v.Created.IsZero() {
		v.Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	if v.State == "" {
		v.State = "available"
		if len(v.Instances) > 0 {
			v.State = "in-use"
		}
	}
	v.Tags, v.Instances = maps.Clone(v.Tags), slices.Clone(v.Instances)
	if s.volumes[account] == nil {
		s.volumes[account] = map[string]*Volume{}
	}
	s.volumes[account][v.ID] = &v
	return v.ID
}

func (s *Server) find(id string) *Volume {
	for _, vs := range s.volumes {
		if v := vs[id]; v != nil {
			return v
		}
	}
	return nil
}

// Attach attaches a volume to an instance (state in-use); false if it does not exist.
func (s *Server) Attach(id, instance string) bool {
	return s.update(id, func(v *Volume) { v.Instances, v.State = append(v.Instances, instance), "in-use" })
}

// SetState sets a volume's state (creating, deleting, error…) as is.
func (s *Server) SetState(id, state string) bool {
	return s.update(id, func(v *Volume) { v.State = state })
}

// update changes volume id under the lock; false if it does not exist.
func (s *Server) update(id string, change func(*Volume)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.find(id)
	if v == nil {
		return false
	}
	change(v)
	return true
}

// Has reports whether the volume exists, in any account.
func (s *Server) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.find(id) != nil
}

// Snapshots returns the snapshots CreateSnapshot recorded and AddSnapshot
// seeded, in order.
func (s *Server) Snapshots() []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.snapshots)
	for i := range out {
		out[i].Tags = maps.Clone(out[i].Tags)
	}
	return out
}

// SetQuota sets (or adds) a quota of service code ebs in account ("":
// Options.Account); unit is Service Quotas' Unit ("None" for the storage
// quotas, whose unit is in the name).
func (s *Server) SetQuota(account, code, name string, value float64, unit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	account = s.account(account)
	q := s.quotas[account]
	for i := range q {
		if q[i].code == code {
			q[i] = quota{code, name, unit, value}
			return
		}
	}
	s.quotas[account] = append(q, quota{code, name, unit, value})
}

// ---- wire ----

// errorf is the error code answers (fakeapi.QueryErrorf), with its status
// (statusOf).
func errorf(code, format string, args ...any) *fakeapi.QueryError {
	e := fakeapi.QueryErrorf(code, format, args...)
	e.Status = statusOf(code)
	return e
}

// statusOf is EC2's status for code (fakeapi.QueryStatus), and 500 for
// Service Quotas' ServiceException.
func statusOf(code string) int {
	if code == CodeServiceException {
		return http.StatusInternalServerError
	}
	return fakeapi.QueryStatus(code)
}

func defaultMessage(code, op string) string {
	switch code {
	case CodeInternalError:
		return "An internal error has occurred"
	case CodeRequestLimitExceeded:
		return "Request limit exceeded."
	case CodeUnauthorizedOperation:
		return "You are not authorized to perform this operation. User: arn:aws:sts::" + DefaultAccount + ":assumed-role/reclaim/reclaim is not authorized to perform: ec2:" + op
	case CodeAccessDenied:
		return "You don't have access to the resource. User: arn:aws:sts::" + DefaultAccount + ":assumed-role/reclaim/reclaim is not authorized to perform: servicequotas:" + op
	}
	return "ebsfake: injected " + code
}

func (s *Server) requestID() string { return fakeapi.RequestID(s.seq.Add(1)) }

func (s *Server) writeXML(w http.ResponseWriter, v any) { fakeapi.WriteQueryXML(w, v, s.requestID) }

func (s *Server) writeXMLError(w http.ResponseWriter, e *fakeapi.QueryError) {
	e.Write(w, s.requestID())
}

const jsonType = "application/x-amz-json-1.1"

func (s *Server) writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("X-Amzn-Requestid", s.requestID())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (s *Server) writeJSONError(w http.ResponseWriter, e *fakeapi.QueryError) {
	b, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("X-Amzn-Requestid", s.requestID())
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// credential reads region, service and access key id of a SigV4 header.
func credential(auth string) (region, service, key string, ok bool) {
	region, service, ok = fakeapi.SigV4Scope(auth)
	if !ok {
		return "", "", "", false
	}
	if _, cred, found := strings.Cut(auth, "Credential="); found {
		key, _, _ = strings.Cut(cred, "/")
	}
	return region, service, key, true
}

// auth checks the scope and returns the request's account.
func (s *Server) auth(req *http.Request, service, code string) (string, *fakeapi.QueryError) {
	region, svc, key, ok := credential(req.Header.Get("Authorization"))
	switch {
	case !ok:
		return "", errorf(code, "The security token included in the request is invalid (ebsfake: no SigV4 Authorization header)")
	case region != s.opts.Region:
		return "", errorf(code, "Credential should be scoped to a valid region (ebsfake serves %s, request signed for %s)", s.opts.Region, region)
	case svc != service:
		return "", errorf(code, "Credential should be scoped to correct service: '%s' (signed for %q)", service, svc)
	}
	if a := s.opts.Accounts[key]; a != "" {
		return a, nil
	}
	return s.opts.Account, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if target := req.Header.Get("X-Amz-Target"); target != "" {
		s.serveQuotas(w, req, target)
		return
	}
	formErr := req.ParseForm()
	op := req.Form.Get("Action")
	routed := formErr == nil && req.URL.Path == "/" && req.Method == http.MethodPost &&
		(op == OpDescribeVolumes || op == OpDeleteVolume || op == OpCreateSnapshot || op == OpDescribeSnapshots ||
			op == OpDeleteSnapshot || op == OpDescribeImages || op == OpListRecycleBin)
	s.Route(op, routed, op == OpDeleteVolume || op == OpCreateSnapshot || op == OpDeleteSnapshot)
	fakeapi.Saw(Permission(op))
	if !s.delay(req) {
		return
	}
	if !routed {
		s.opts.Logf("ebsfake: no route for %s %s Action=%q (form error %v)", req.Method, req.URL.Path, op, formErr)
		s.writeXMLError(w, errorf(CodeInvalidAction, "The action %s is not valid for this web service.", op))
		return
	}
	account, e := s.auth(req, "ec2", CodeAuthFailure)
	if e != nil {
		s.writeXMLError(w, e)
		return
	}
	switch v := req.Form.Get("Version"); v {
	case Version:
	case "":
		s.writeXMLError(w, errorf(CodeMissingParameter, "The request must contain the parameter Version"))
		return
	default:
		s.writeXMLError(w, errorf(CodeNoSuchVersion, "The requested version (%s) of service AmazonEC2 does not exist", v))
		return
	}
	page := 1
	if t, ok := fakeapi.ParsePageToken(req.Form.Get("NextToken")); ok {
		page = t.Page
	}
	if f := s.TakeFault(op, page); f != nil {
		s.writeXMLError(w, f.Answer(statusOf(f.Code), defaultMessage(f.Code, op)))
		return
	}
	var out any
	switch op {
	case OpDescribeVolumes:
		out, e = s.describeVolumes(account, req.Form)
	case OpDeleteVolume:
		out, e = s.deleteVolume(account, req.Form)
	case OpCreateSnapshot:
		out, e = s.createSnapshot(account, req.Form)
	case OpDescribeSnapshots:
		out, e = s.describeSnapshots(account, req.Form)
	case OpDeleteSnapshot:
		out, e = s.deleteSnapshot(account, req.Form)
	case OpDescribeImages:
		out, e = s.describeImages(account, req.Form)
	case OpListRecycleBin:
		out, e = s.listRecycleBin(account, req.Form)
	}
	if e != nil {
		s.writeXMLError(w, e)
		return
	}
	s.writeXML(w, out)
}

func (s *Server) delay(req *http.Request) bool {
	return fakeapi.Delay(req.Context(), s.opts.Latency)
}

// ---- DescribeVolumes ----

type xmlAttachment struct {
	VolumeID            string `xml:"volumeId"`
	InstanceID          string `xml:"instanceId"`
	Device              string `xml:"device"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xmlVolume struct {
	VolumeID           string                          `xml:"volumeId"`
	Size               int64                           `xml:"size"`
	SnapshotID         string                          `xml:"snapshotId"`
	AvailabilityZone   string                          `xml:"availabilityZone"`
	Status             string                          `xml:"status"`
	CreateTime         string                          `xml:"createTime"`
	AttachmentSet      fakeapi.XMLSet[xmlAttachment]   `xml:"attachmentSet"`
	TagSet             *fakeapi.XMLSet[fakeapi.XMLTag] `xml:"tagSet"`
	VolumeType         string                          `xml:"volumeType"`
	Iops               int32                           `xml:"iops,omitempty"`
	Throughput         int32                           `xml:"throughput,omitempty"`
	Encrypted          bool                            `xml:"encrypted"`
	MultiAttachEnabled bool                            `xml:"multiAttachEnabled"`
}

type describeVolumesResponse struct {
	XMLName   xml.Name                  `xml:"DescribeVolumesResponse"`
	Xmlns     string                    `xml:"xmlns,attr"`
	RequestID string                    `xml:"requestId"`
	VolumeSet fakeapi.XMLSet[xmlVolume] `xml:"volumeSet"`
	NextToken string                    `xml:"nextToken,omitempty"`
}

const timeFormat = "2006-01-02T15:04:05.000Z"

func toXML(v *Volume) xmlVolume {
	x := xmlVolume{
		VolumeID: v.ID, Size: v.SizeGiB, SnapshotID: v.SnapshotID, AvailabilityZone: v.AZ,
		Status: v.State, CreateTime: v.Created.UTC().Format(timeFormat), VolumeType: v.Type,
		Iops: v.Iops, Throughput: v.Throughput, Encrypted: v.Encrypted, MultiAttachEnabled: v.MultiAttach,
	}
	for i, in := range v.Instances {
		x.AttachmentSet.Items = append(x.AttachmentSet.Items, xmlAttachment{
			VolumeID: v.ID, InstanceID: in, Device: fmt.Sprintf("/dev/xvd%c", 'b'+i%25), Status: "attached",
			AttachTime: v.Created.UTC().Format(timeFormat),
		})
	}
	if len(v.Tags) > 0 {
		ts := fakeapi.TagSet(v.Tags)
		x.TagSet = &ts
	}
	return x
}

func checkVolumeID(id string) *fakeapi.QueryError {
	if !strings.HasPrefix(id, "vol-") || len(id) < len("vol-")+8 {
		return errorf(CodeVolumeMalformed, "Invalid id: \"%s\" (expecting \"vol-...\")", id)
	}
	return nil
}

func (s *Server) describeVolumes(account string, form url.Values) (any, *fakeapi.QueryError) {
	size := 0
	if v := form.Get("MaxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < MinPageSize {
			return nil, errorf(CodeInvalidParameterValue, "Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", v, MinPageSize, MaxPageSize)
		}
		size = min(n, MaxPageSize)
	}
	ids := fakeapi.QueryList(form, "VolumeId")
	if len(ids) > 0 && size > 0 {
		return nil, errorf(CodeInvalidParameterCombination, "The parameter volumeSet cannot be used with the parameter maxResults")
	}
	filters, e := queryFilters(form, "snapshot-id", "status")
	if e != nil {
		return nil, e
	}
	after, page := "", 1
	if tok := form.Get("NextToken"); tok != "" {
		t, ok := fakeapi.ParsePageToken(tok)
		if !ok || t.Query != fakeapi.QueryFingerprint(form) {
			return nil, errorf(CodeInvalidNextToken, "The specified NextToken is not valid.")
		}
		after, page = t.After, t.Page
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vols := s.volumes[account]
	var cand []string
	if len(ids) > 0 {
		for _, id := range ids {
			if e := checkVolumeID(id); e != nil {
				return nil, e
			}
			if vols[id] == nil {
				return nil, errorf(CodeVolumeNotFound, "The volume '%s' does not exist.", id)
			}
		}
		cand = slices.Compact(slices.Sorted(slices.Values(ids)))
	} else {
		cand = slices.Sorted(maps.Keys(vols))
	}
	out := &describeVolumesResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, id := range cand {
		if id <= after {
			continue
		}
		v := vols[id]
		if !filters.match(func(name string) (string, bool) {
			if name == "status" {
				return v.State, true
			}
			return v.SnapshotID, true
		}) {
			continue
		}
		if size > 0 && len(out.VolumeSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.VolumeSet.Items[size-1].VolumeID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		out.VolumeSet.Items = append(out.VolumeSet.Items, toXML(v))
	}
	return out, nil
}

// ---- DeleteVolume ----

type deleteVolumeResponse struct {
	XMLName   xml.Name `xml:"DeleteVolumeResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Return    bool     `xml:"return"`
}

func (s *Server) deleteVolume(account string, form url.Values) (any, *fakeapi.QueryError) {
	id := form.Get("VolumeId")
	if id == "" {
		return nil, errorf(CodeMissingParameter, "The request must contain the parameter volume")
	}
	if e := checkVolumeID(id); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[account][id]
	switch {
	case v == nil:
		return nil, errorf(CodeVolumeNotFound, "The volume '%s' does not exist.", id)
	case len(v.Instances) > 0:
		return nil, errorf(CodeVolumeInUse, "Volume %s is currently attached to %s", id, v.Instances[0])
	case v.State != "available":
		return nil, errorf(CodeIncorrectState, "The volume '%s' is '%s'", id, v.State)
	}
	delete(s.volumes[account], id)
	if s.LoseResponse() {
		return nil, errorf(CodeInternalError, "An internal error has occurred")
	}
	return &deleteVolumeResponse{Xmlns: Namespace, RequestID: s.requestID(), Return: true}, nil
}

// ---- CreateSnapshot ----

type createSnapshotResponse struct {
	XMLName     xml.Name                        `xml:"CreateSnapshotResponse"`
	Xmlns       string                          `xml:"xmlns,attr"`
	RequestID   string                          `xml:"requestId"`
	SnapshotID  string                          `xml:"snapshotId"`
	VolumeID    string                          `xml:"volumeId"`
	Status      string                          `xml:"status"`
	StartTime   string                          `xml:"startTime"`
	Progress    string                          `xml:"progress"`
	OwnerID     string                          `xml:"ownerId"`
	VolumeSize  int64                           `xml:"volumeSize"`
	Description string                          `xml:"description"`
	Encrypted   bool                            `xml:"encrypted"`
	TagSet      *fakeapi.XMLSet[fakeapi.XMLTag] `xml:"tagSet"`
}

func (s *Server) createSnapshot(account string, form url.Values) (any, *fakeapi.QueryError) {
	id := form.Get("VolumeId")
	if id == "" {
		return nil, errorf(CodeMissingParameter, "The request must contain the parameter VolumeId")
	}
	if e := checkVolumeID(id); e != nil {
		return nil, e
	}
	tags := map[string]string{}
	for i := 1; ; i++ {
		p := "TagSpecification." + strconv.Itoa(i)
		rt, ok := form[p+".ResourceType"]
		if !ok {
			break
		}
		if rt[0] != "snapshot" {
			return nil, errorf(CodeInvalidParameterValue, "'%s' is not a valid taggable resource type for this operation.", rt[0])
		}
		for j := 1; ; j++ {
			k, ok := form[p+".Tag."+strconv.Itoa(j)+".Key"]
			if !ok {
				break
			}
			tags[k[0]] = form.Get(p + ".Tag." + strconv.Itoa(j) + ".Value")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[account][id]
	if v == nil {
		return nil, errorf(CodeVolumeNotFound, "The volume '%s' does not exist.", id)
	}
	snap := Snapshot{Account: account, ID: fmt.Sprintf("snap-%017x", s.seq.Add(1)), VolumeID: id,
		Description: form.Get("Description"), State: "pending", Tags: tags, Started: time.Now().UTC(),
		SizeGiB: v.SizeGiB, StorageTier: "standard"}
	s.snapshots = append(s.snapshots, snap)
	out := &createSnapshotResponse{Xmlns: Namespace, RequestID: s.requestID(), SnapshotID: snap.ID, VolumeID: id,
		Status: "pending", StartTime: snap.Started.Format(timeFormat), OwnerID: account, VolumeSize: v.SizeGiB,
		Description: snap.Description, Encrypted: v.Encrypted}
	if len(tags) > 0 {
		ts := fakeapi.TagSet(tags)
		out.TagSet = &ts
	}
	return out, nil
}

// ---- ListServiceQuotas ----

type listQuotasInput struct {
	ServiceCode string
	NextToken   string
	MaxResults  *int
}

type jsonQuota struct {
	ServiceCode string  `json:"ServiceCode"`
	ServiceName string  `json:"ServiceName"`
	QuotaArn    string  `json:"QuotaArn"`
	QuotaCode   string  `json:"QuotaCode"`
	QuotaName   string  `json:"QuotaName"`
	Value       float64 `json:"Value"`
	Unit        string  `json:"Unit"`
	Adjustable  bool    `json:"Adjustable"`
	GlobalQuota bool    `json:"GlobalQuota"`
}

type listQuotasOutput struct {
	Quotas    []jsonQuota `json:"Quotas"`
	NextToken string      `json:"NextToken,omitempty"`
}

func (s *Server) serveQuotas(w http.ResponseWriter, req *http.Request, target string) {
	op, ok := strings.CutPrefix(target, TargetPrefix)
	routed := ok && op == OpListServiceQuotas && req.Method == http.MethodPost && req.URL.Path == "/"
	s.Route(op, routed, false)
	fakeapi.Saw(Permission(op))
	if !s.delay(req) {
		return
	}
	if !routed {
		s.opts.Logf("ebsfake: no route for %s %s X-Amz-Target=%q", req.Method, req.URL.Path, target)
		s.writeJSONError(w, errorf("UnknownOperationException", "ebsfake: unknown operation %s", target))
		return
	}
	account, e := s.auth(req, "servicequotas", CodeUnrecognizedClient)
	if e != nil {
		e.Status = http.StatusBadRequest
		s.writeJSONError(w, e)
		return
	}
	var in listQuotasInput
	body, err := io.ReadAll(req.Body)
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		s.writeJSONError(w, errorf("SerializationException", "ebsfake: body: %v", err))
		return
	}
	start, page := 0, 1
	if in.NextToken != "" {
		raw, _ := base64.StdEncoding.DecodeString(in.NextToken)
		t, ok := fakeapi.ParsePageToken(base64.RawURLEncoding.EncodeToString(raw))
		n, err := strconv.Atoi(t.After)
		if !ok || err != nil || t.Query != in.ServiceCode {
			s.writeJSONError(w, errorf(CodeInvalidPaginationTk, "Invalid pagination token"))
			return
		}
		start, page = n, t.Page
	}
	if f := s.TakeFault(op, page); f != nil {
		s.writeJSONError(w, f.Answer(statusOf(f.Code), defaultMessage(f.Code, op)))
		return
	}
	size := MaxQuotaResults
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > MaxQuotaResults {
			s.writeJSONError(w, errorf("ValidationException", "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", *in.MaxResults))
			return
		}
		size = *in.MaxResults
	}
	if in.ServiceCode == "" {
		s.writeJSONError(w, errorf(CodeIllegalArgument, "ServiceCode is required"))
		return
	}
	if in.ServiceCode != "ebs" {
		s.writeJSONError(w, errorf(CodeNoSuchResource, "ebsfake serves service code ebs only, not %s", in.ServiceCode))
		return
	}
	s.mu.Lock()
	qs := slices.Clone(s.quotas[account])
	s.mu.Unlock()
	out := listQuotasOutput{Quotas: []jsonQuota{}}
	for i := start; i < len(qs); i++ {
		if len(out.Quotas) == size {
			// Service Quotas' tokens are standard base64 (^[a-zA-Z0-9/+]*={0,2}$).
			raw, _ := base64.RawURLEncoding.DecodeString(fakeapi.PageToken{Page: page + 1, After: strconv.Itoa(i), Query: in.ServiceCode}.String())
			out.NextToken = base64.StdEncoding.EncodeToString(raw)
			break
		}
		q := qs[i]
		out.Quotas = append(out.Quotas, jsonQuota{ServiceCode: "ebs", ServiceName: "Amazon Elastic Block Store (Amazon EBS)",
			QuotaArn:  "arn:aws:servicequotas:" + s.opts.Region + ":" + account + ":ebs/" + q.code,
			QuotaCode: q.code, QuotaName: q.name, Value: q.value, Unit: q.unit, Adjustable: true})
	}
	s.writeJSON(w, out)
}
