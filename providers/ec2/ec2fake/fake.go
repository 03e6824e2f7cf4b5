// Package ec2fake is a wire-level fake of the parts of the Amazon EC2 API that
// reclaim uses: DescribeSubnets, DescribeNetworkInterfaces,
// DeleteNetworkInterface and DescribeRegions. It speaks the EC2 Query protocol as the real service
// does (POST / with a form-encoded body Action=…&Version=2016-11-15, list
// parameters as Filter.1.Name / Filter.1.Value.1 and SubnetId.1, XML answers in
// the http://ec2.amazonaws.com/doc/2016-11-15/ namespace with <requestId>, and
// errors as <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
// without a namespace), so the real aws-sdk-go-v2 EC2 client drives it through
// BaseEndpoint and static credentials. Requests without a SigV4 Authorization
// header for service "ec2" in the fake's region are refused (AuthFailure).
//
// One fake is one account's EC2 in one region. Everything a test arranges or
// observes is a method on *Server: the model (AddSubnet, AddInterface,
// AddInterfaces, Attach, Detach, RemoveInterface, Interface, Interfaces,
// Subnets), fault injection (FailNext, FailPage, LoseDeleteResponses),
// per-class token buckets (Options.Describe, Options.Delete, SetRate),
// latency, and counters (Calls, CallCounts, TotalCalls, MutatingCalls,
// Throttled).
//
// Behaviour that mirrors real EC2 and matters to a garbage collector:
//   - DescribeNetworkInterfaces takes MaxResults 5..1000 (InvalidParameterValue
//     otherwise) and refuses it together with NetworkInterfaceId.N
//     (InvalidParameterCombination); without MaxResults every match is
//     returned at once. NetworkInterfaceId.N with one id that does not exist
//     fails the whole call with InvalidNetworkInterfaceID.NotFound; the
//     network-interface-id filter just leaves it out.
//   - Since 2026 EC2 hides resources that an AWS service manages
//     (operator.managed) unless the request says IncludeManagedResources=true:
//     a client that forgets the flag under-counts who holds a subnet's IPs.
//   - DescribeSubnets with SubnetId.N and one id that does not exist fails with
//     InvalidSubnetID.NotFound; availableIpAddressCount is computed from the
//     interfaces in the subnet (2^(32-prefix) − 5, minus their addresses and
//     16 per delegated /28 prefix).
//   - DeleteNetworkInterface answers InvalidNetworkInterfaceID.NotFound (upper
//     case "ID") for an id that does not exist and InvalidNetworkInterface.InUse
//     for an attached interface; a malformed id is
//     InvalidNetworkInterfaceId.Malformed (lower case "d").
//   - Throttling is RequestLimitExceeded with HTTP 503, per action class
//     (describe, delete), like EC2's request-rate token buckets.
//
// All methods are safe for concurrent use.
package ec2fake

import (
	"cmp"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"log"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Actions, as in the Action parameter.
const (
	ActionDescribeSubnets           = "DescribeSubnets"
	ActionDescribeNetworkInterfaces = "DescribeNetworkInterfaces"
	ActionDeleteNetworkInterface    = "DeleteNetworkInterface"
	ActionDescribeRegions           = "DescribeRegions"
	// ActionUnknown counts requests the fake could not route (no or an
	// unknown Action, a wrong path or method).
	ActionUnknown = fakeapi.Unknown
)

// Version is the only API version EC2 Query requests may carry.
const Version = "2016-11-15"

// Namespace is the xmlns of every success answer.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// DefaultAccount is the ownerId of what the fake holds unless Options.Account says otherwise.
const DefaultAccount = "123456789012"

// Limits of the real API.
const (
	MinPageSize = 5
	MaxPageSize = 1000
)

// Error codes the fake answers with. Note the casing: EC2 really has both
// InvalidNetworkInterfaceID.NotFound and InvalidNetworkInterfaceId.Malformed.
const (
	CodeRequestLimitExceeded        = "RequestLimitExceeded"
	CodeInternalError               = "InternalError"
	CodeUnavailable                 = "Unavailable"
	CodeUnauthorizedOperation       = "UnauthorizedOperation"
	CodeAuthFailure                 = "AuthFailure"
	CodeInvalidAction               = "InvalidAction"
	CodeNoSuchVersion               = "NoSuchVersion"
	CodeMissingParameter            = "MissingParameter"
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
	CodeInvalidNextToken            = "InvalidNextToken"
	CodeDryRunOperation             = "DryRunOperation"
	CodeInterfaceNotFound           = "InvalidNetworkInterfaceID.NotFound"
	CodeInterfaceNotFoundAlt        = "InvalidNetworkInterface.NotFound"
	CodeInterfaceMalformed          = "InvalidNetworkInterfaceId.Malformed"
	CodeInterfaceInUse              = "InvalidNetworkInterface.InUse"
	CodeSubnetNotFound              = "InvalidSubnetID.NotFound"
	CodeSubnetMalformed             = "InvalidSubnetID.Malformed"
)

// Action classes, the keys of the token buckets.
const (
	ClassDescribe = "describe"
	ClassDelete   = "delete"
)

func classOf(action string) string {
	if action == ActionDeleteNetworkInterface {
		return ClassDelete
	}
	return ClassDescribe
}

// RateLimit is a token bucket (fakeapi.RateLimit). A request without a
// token is answered HTTP 503 RequestLimitExceeded.
type RateLimit = fakeapi.RateLimit

// Options configures a Server. The zero value is usable: no throttling, no latency.
type Options struct {
	// Region is the region the fake serves; requests must be signed for it.
	// Default us-east-1.
	Region string
	// Account is the ownerId of the subnets and interfaces; default DefaultAccount.
	Account string
	// Latency is added to every request before it is handled.
	Latency time.Duration
	// Describe is the bucket of the non-mutating actions, Delete that of
	// DeleteNetworkInterface.
	Describe RateLimit
	Delete   RateLimit
	// OnRequest, if set, is called for every routed request with its action,
	// before it is handled (outside the fake's lock).
	OnRequest func(action string)
	// Logf receives one line per unroutable request. Default log.Printf.
	Logf func(format string, args ...any)
}

// Subnet is a subnet to seed, and what Subnets returns.
type Subnet struct {
	ID   string // subnet-…; required
	VPC  string // default vpc-0example
	AZ   string // default <region>a
	CIDR string // IPv4, e.g. 10.0.0.0/20; required
	Tags map[string]string
	// Available is computed by the fake (read only).
	Available int
}

// Interface is a network interface to seed, and what Interface returns.
type Interface struct {
	ID          string // eni-…; default: made up
	Subnet      string // required; the subnet must exist
	VPC, AZ     string // default: the subnet's
	Description string
	// Status defaults to in-use when Instance is set, else available.
	Status string
	// Type is interfaceType; default "interface".
	Type             string
	RequesterManaged bool
	RequesterID      string
	// OperatorManaged hides the interface from requests without
	// IncludeManagedResources=true.
	OperatorManaged   bool
	OperatorPrincipal string
	Tags              map[string]string
	// IPs are the private IPv4 addresses, the primary first; default: one
	// address allocated from the subnet.
	IPs []string
	// Prefixes are delegated IPv4 /28 prefixes.
	Prefixes []string
	// Instance is the attached instance; "" is detached.
	Instance string
	MAC      string
}

// Held is how many subnet addresses the interface holds: its IPs and 16 per prefix.
func (i *Interface) Held() int { return len(i.IPs) + 16*len(i.Prefixes) }

type subnet struct {
	Subnet
	prefix netip.Prefix
	usable int
	next   netip.Addr // allocation cursor
	used   map[netip.Addr]bool
	held   int
}

// Server is the fake EC2 API.
type Server struct {
	// Counter counts requests by action (Calls, CallCounts, TotalCalls,
	// MutatingCalls, ResetCalls).
	fakeapi.Counter
	// Injected holds the faults (FailNext, FailPage, FailPageMessage,
	// ClearFaults, LoseDeleteResponses).
	fakeapi.Injected
	// Buckets are the action classes' rate limits (SetRate, Throttled).
	fakeapi.Buckets

	mu      sync.Mutex
	opts    Options
	subnets map[string]*subnet
	ifaces  map[string]*Interface
	ids     []string // sorted interface ids, lazily
	dirty   bool
	latency time.Duration
	seq     atomic.Uint64
	// regions are the account's regions (SetRegions); nil: the fake's own.
	regions []Region

	// Listener serves it locally (Start, URL, Close).
	fakeapi.Listener
}

// New returns a fake that is not listening: it is an http.Handler. Start it
// with Start (or serve it yourself).
func New(opts Options) *Server {
	opts.Region = cmp.Or(opts.Region, "us-east-1")
	opts.Account = cmp.Or(opts.Account, DefaultAccount)
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	s := &Server{
		opts:    opts,
		subnets: map[string]*subnet{},
		ifaces:  map[string]*Interface{},
		latency: opts.Latency,
	}
	s.SetRate(ClassDescribe, opts.Describe)
	s.SetRate(ClassDelete, opts.Delete)
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

// Account is the owner of what the fake holds.
func (s *Server) Account() string { return s.opts.Account }

// SetLatency changes the per-request latency.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// ResetCalls zeroes the counters (and the throttle count).
func (s *Server) ResetCalls() {
	s.Counter.ResetCalls()
	s.ResetThrottled()
}

// ---- model ----

// AddSubnet seeds a subnet, or replaces its VPC, AZ and tags if it exists. It
// panics on a bad id or CIDR (a test bug).
func (s *Server) AddSubnet(sn Subnet) {
	p, err := netip.ParsePrefix(sn.CIDR)
	if err != nil || !p.Addr().Is4() || p.Bits() > 28 || p.Bits() < 16 {
		panic(fmt.Sprintf("ec2fake.AddSubnet %s: CIDR %q: want an IPv4 /16../28", sn.ID, sn.CIDR))
	}
	if !strings.HasPrefix(sn.ID, "subnet-") {
		panic(fmt.Sprintf("ec2fake.AddSubnet: id %q: want subnet-…", sn.ID))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn.VPC == "" {
		sn.VPC = "vpc-0example"
	}
	if sn.AZ == "" {
		sn.AZ = s.opts.Region + "a"
	}
	sn.Tags = maps.Clone(sn.Tags)
	if old := s.subnets[sn.ID]; old != nil {
		old.VPC, old.AZ, old.Tags = sn.VPC, sn.AZ, sn.Tags
		return
	}
	p = p.Masked()
	s.subnets[sn.ID] = &subnet{
		Subnet: sn,
		prefix: p,
		usable: 1<<(32-p.Bits()) - 5,
		// AWS reserves the network address and the next three.
		next: p.Addr().Next().Next().Next().Next(),
		used: map[netip.Addr]bool{},
	}
}

// alloc returns a free address of the subnet; the caller holds the lock.
func (sn *subnet) alloc() (netip.Addr, bool) {
	last := lastAddr(sn.prefix) // broadcast: reserved
	first := sn.prefix.Addr().Next().Next().Next().Next()
	for range sn.usable {
		a := sn.next
		if sn.next = a.Next(); sn.next == last {
			sn.next = first
		}
		if !sn.used[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// AddInterface seeds one interface (see AddInterfaces) and returns its id.
func (s *Server) AddInterface(in Interface) string {
	return s.AddInterfaces(in)[0]
}

// AddInterfaces seeds interfaces into existing subnets and returns their ids.
// An interface with an id already present replaces it. Addresses not given are
// allocated from the subnet. It panics when the subnet does not exist or is
// full (a test bug).
func (s *Server) AddInterfaces(ins ...Interface) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(ins))
	for _, in := range ins {
		sn := s.subnets[in.Subnet]
		if sn == nil {
			panic(fmt.Sprintf("ec2fake.AddInterface: subnet %q does not exist", in.Subnet))
		}
		if in.ID == "" {
			in.ID = fmt.Sprintf("eni-%017x", s.seq.Add(1))
		}
		if !strings.HasPrefix(in.ID, "eni-") {
			panic(fmt.Sprintf("ec2fake.AddInterface: id %q: want eni-…", in.ID))
		}
		if old := s.ifaces[in.ID]; old != nil {
			s.release(old)
		} else {
			s.dirty = true
		}
		in.IPs = slices.Clone(in.IPs)
		in.Prefixes = slices.Clone(in.Prefixes)
		in.Tags = maps.Clone(in.Tags)
		if len(in.IPs) == 0 {
			a, ok := sn.alloc()
			if !ok {
				panic(fmt.Sprintf("ec2fake.AddInterface: subnet %s (%s) is full", sn.ID, sn.CIDR))
			}
			in.IPs = []string{a.String()}
		}
		for _, ip := range in.IPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				sn.used[a] = true
			}
		}
		sn.held += in.Held()
		if in.VPC == "" {
			in.VPC = sn.VPC
		}
		if in.AZ == "" {
			in.AZ = sn.AZ
		}
		if in.Type == "" {
			in.Type = "interface"
		}
		if in.Status == "" {
			in.Status = "available"
			if in.Instance != "" {
				in.Status = "in-use"
			}
		}
		if in.MAC == "" {
			h := sha256.Sum256([]byte(in.ID))
			in.MAC = fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", h[0], h[1], h[2], h[3], h[4])
		}
		s.ifaces[in.ID] = &in
		ids = append(ids, in.ID)
	}
	return ids
}

// release frees an interface's addresses; the caller holds the lock.
func (s *Server) release(in *Interface) {
	sn := s.subnets[in.Subnet]
	if sn == nil {
		return
	}
	for _, ip := range in.IPs {
		if a, err := netip.ParseAddr(ip); err == nil {
			delete(sn.used, a)
		}
	}
	sn.held -= in.Held()
}

// RemoveInterface deletes an interface out of band (no checks, no counters).
func (s *Server) RemoveInterface(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remove(id)
}

func (s *Server) remove(id string) bool {
	in := s.ifaces[id]
	if in == nil {
		return false
	}
	s.release(in)
	delete(s.ifaces, id)
	s.dirty = true
	return true
}

// Attach attaches an interface to an instance (status in-use).
func (s *Server) Attach(id, instance string) bool {
	return s.update(id, func(in *Interface) { in.Instance, in.Status = instance, "in-use" })
}

// Detach detaches an interface (status available).
func (s *Server) Detach(id string) bool {
	return s.update(id, func(in *Interface) { in.Instance, in.Status = "", "available" })
}

// SetStatus sets an interface's status (e.g. detaching) without changing its attachment.
func (s *Server) SetStatus(id, status string) bool {
	return s.update(id, func(in *Interface) { in.Status = status })
}

// update changes interface id under the lock; false if it does not exist.
func (s *Server) update(id string, change func(*Interface)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.ifaces[id]
	if in == nil {
		return false
	}
	change(in)
	return true
}

// Has reports whether the interface exists.
func (s *Server) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ifaces[id] != nil
}

// Interface returns a copy of an interface.
func (s *Server) Interface(id string) (Interface, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.ifaces[id]
	if in == nil {
		return Interface{}, false
	}
	return in.clone(), true
}

func (in *Interface) clone() Interface {
	c := *in
	c.IPs, c.Prefixes, c.Tags = slices.Clone(in.IPs), slices.Clone(in.Prefixes), maps.Clone(in.Tags)
	return c
}

// Interfaces returns copies of every interface, by id.
func (s *Server) Interfaces() []Interface {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Interface, 0, len(s.ifaces))
	for _, id := range s.sortedIDs() {
		out = append(out, s.ifaces[id].clone())
	}
	return out
}

// Subnets returns copies of every subnet, by id, with Available computed.
func (s *Server) Subnets() []Subnet {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Subnet, 0, len(s.subnets))
	for _, id := range slices.Sorted(maps.Keys(s.subnets)) {
		sn := s.subnets[id]
		c := sn.Subnet
		c.Tags = maps.Clone(sn.Tags)
		c.Available = sn.available()
		out = append(out, c)
	}
	return out
}

func (sn *subnet) available() int { return max(0, sn.usable-sn.held) }

func (s *Server) sortedIDs() []string {
	if s.dirty {
		s.ids = slices.Sorted(maps.Keys(s.ifaces))
		s.dirty = false
	}
	return s.ids
}

// ---- wire ----

// errorf and statusOf are EC2's (fakeapi.QueryErrorf, QueryStatus).
var errorf, statusOf = fakeapi.QueryErrorf, fakeapi.QueryStatus

func defaultMessage(code, action string) string {
	switch code {
	case CodeRequestLimitExceeded:
		return "Request limit exceeded."
	case CodeInternalError:
		return "An internal error has occurred"
	case CodeUnavailable:
		return "The server is overloaded and can't handle the request."
	case CodeUnauthorizedOperation:
		return "You are not authorized to perform this operation. User: arn:aws:sts::" + DefaultAccount + ":assumed-role/reclaim/reclaim is not authorized to perform: ec2:" + action + " because no identity-based policy allows the ec2:" + action + " action"
	case CodeAuthFailure:
		return "AWS was not able to validate the provided access credentials"
	}
	return "ec2fake: injected " + code
}

func (s *Server) requestID() string { return fakeapi.RequestID(s.seq.Add(1)) }

func (s *Server) writeXML(w http.ResponseWriter, v any) { fakeapi.WriteQueryXML(w, v, s.requestID) }

func (s *Server) writeError(w http.ResponseWriter, e *fakeapi.QueryError) { e.Write(w, s.requestID()) }

// checkAuth accepts a SigV4 Authorization header scoped to the fake's region
// and service ec2. It does not verify the signature.
func (s *Server) checkAuth(req *http.Request) *fakeapi.QueryError {
	a := req.Header.Get("Authorization")
	if !strings.HasPrefix(a, fakeapi.SigV4Scheme+" ") {
		return errorf(CodeAuthFailure, "AWS was not able to validate the provided access credentials (ec2fake: no SigV4 Authorization header)")
	}
	region, service, ok := fakeapi.SigV4Scope(a)
	if !ok {
		return errorf(CodeAuthFailure, "AWS was not able to validate the provided access credentials (ec2fake: bad Credential)")
	}
	if region != s.opts.Region {
		return errorf(CodeAuthFailure, "AWS was not able to validate the provided access credentials (ec2fake serves %s, request signed for %s)", s.opts.Region, region)
	}
	if service != "ec2" {
		return errorf(CodeAuthFailure, "AWS was not able to validate the provided access credentials (ec2fake: signed for service %q, want ec2)", service)
	}
	return nil
}

var knownActions = map[string]bool{
	ActionDescribeSubnets: true, ActionDescribeNetworkInterfaces: true, ActionDeleteNetworkInterface: true,
	ActionDescribeRegions: true,
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	formErr := req.ParseForm()
	action := req.Form.Get("Action")
	routed := formErr == nil && knownActions[action] && req.URL.Path == "/" &&
		(req.Method == http.MethodPost || req.Method == http.MethodGet)
	s.mu.Lock()
	s.Route(action, routed, action == ActionDeleteNetworkInterface)
	fakeapi.Saw(Permission(action))
	latency := s.latency
	hook := s.opts.OnRequest
	logf := s.opts.Logf
	s.mu.Unlock()

	if !fakeapi.Delay(req.Context(), latency) {
		return
	}
	if !routed {
		logf("ec2fake: no route for %s %s Action=%q (form error %v)", req.Method, req.URL.Path, action, formErr)
		if action == "" {
			s.writeError(w, errorf(CodeMissingParameter, "The request must contain the parameter Action"))
			return
		}
		s.writeError(w, errorf(CodeInvalidAction, "The action %s is not valid for this web service.", action))
		return
	}
	if e := s.checkAuth(req); e != nil {
		s.writeError(w, e)
		return
	}
	switch v := req.Form.Get("Version"); v {
	case Version:
	case "":
		s.writeError(w, errorf(CodeMissingParameter, "The request must contain the parameter Version"))
		return
	default:
		s.writeError(w, errorf(CodeNoSuchVersion, "The requested version (%s) of service AmazonEC2 does not exist", v))
		return
	}
	if req.Form.Get("DryRun") == "true" {
		s.writeError(w, errorf(CodeDryRunOperation, "Request would have succeeded, but DryRun flag is set."))
		return
	}
	page := 1
	if tok := req.Form.Get("NextToken"); tok != "" {
		if t, ok := fakeapi.ParsePageToken(tok); ok {
			page = t.Page
		}
	}

	if !s.Allow(classOf(action)) {
		s.writeError(w, errorf(CodeRequestLimitExceeded, "Request limit exceeded."))
		return
	}
	if f := s.TakeFault(action, page); f != nil {
		s.writeError(w, f.Answer(statusOf(f.Code), defaultMessage(f.Code, action)))
		return
	}
	if hook != nil {
		hook(action)
	}

	var out any
	var e *fakeapi.QueryError
	switch action {
	case ActionDescribeSubnets:
		out, e = s.describeSubnets(req.Form)
	case ActionDescribeNetworkInterfaces:
		out, e = s.describeInterfaces(req.Form)
	case ActionDeleteNetworkInterface:
		out, e = s.deleteInterface(req.Form)
	case ActionDescribeRegions:
		out, e = s.describeRegions(req.Form)
	}
	if e != nil {
		s.writeError(w, e)
		return
	}
	s.writeXML(w, out)
}

// ---- parameters ----

type filter struct {
	name   string
	values []string
}

func filters(form url.Values) []filter {
	var out []filter
	for i := 1; ; i++ {
		p := "Filter." + strconv.Itoa(i)
		name, ok := form[p+".Name"]
		if !ok {
			return out
		}
		out = append(out, filter{name: name[0], values: fakeapi.QueryList(form, p+".Value")})
	}
}

// pageSize reads MaxResults: 0 when absent.
func pageSize(form url.Values) (int, *fakeapi.QueryError) {
	v := form.Get("MaxResults")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < MinPageSize || n > MaxPageSize {
		return 0, errorf(CodeInvalidParameterValue, "Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", v, MinPageSize, MaxPageSize)
	}
	return n, nil
}

// startAfter reads NextToken: the id after which this page starts and its page number.
func startAfter(form url.Values) (after string, page int, e *fakeapi.QueryError) {
	tok := form.Get("NextToken")
	if tok == "" {
		return "", 1, nil
	}
	t, ok := fakeapi.ParsePageToken(tok)
	if !ok || t.Query != fakeapi.QueryFingerprint(form) {
		return "", 0, errorf(CodeInvalidNextToken, "The specified NextToken is not valid.")
	}
	return t.After, t.Page, nil
}

func matchTag(tags map[string]string, key string, values []string) bool {
	v, ok := tags[key]
	return ok && matchAny(v, values)
}

// matchAny is EC2's filter match: any value, with * and ? wildcards.
func matchAny(v string, values []string) bool {
	for _, w := range values {
		if wildcard(w, v) {
			return true
		}
	}
	return false
}

func wildcard(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	// Small backtracking matcher for * and ?.
	p, t := 0, 0
	star, mark := -1, 0
	for t < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[t]):
			p++
			t++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, t
			p++
		case star >= 0:
			p = star + 1
			mark++
			t = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// ---- DescribeSubnets ----

type xmlSubnet struct {
	SubnetID                string                         `xml:"subnetId"`
	SubnetArn               string                         `xml:"subnetArn"`
	State                   string                         `xml:"state"`
	OwnerID                 string                         `xml:"ownerId"`
	VpcID                   string                         `xml:"vpcId"`
	CidrBlock               string                         `xml:"cidrBlock"`
	AvailableIPAddressCount int                            `xml:"availableIpAddressCount"`
	AvailabilityZone        string                         `xml:"availabilityZone"`
	DefaultForAz            bool                           `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool                           `xml:"mapPublicIpOnLaunch"`
	TagSet                  fakeapi.XMLSet[fakeapi.XMLTag] `xml:"tagSet"`
}

type describeSubnetsResponse struct {
	XMLName   xml.Name                  `xml:"DescribeSubnetsResponse"`
	Xmlns     string                    `xml:"xmlns,attr"`
	RequestID string                    `xml:"requestId"`
	SubnetSet fakeapi.XMLSet[xmlSubnet] `xml:"subnetSet"`
	NextToken string                    `xml:"nextToken,omitempty"`
}

func (s *Server) subnetMatch(sn *subnet, fs []filter) (bool, *fakeapi.QueryError) {
	for _, f := range fs {
		var ok bool
		switch {
		case f.name == "subnet-id":
			ok = matchAny(sn.ID, f.values)
		case f.name == "vpc-id":
			ok = matchAny(sn.VPC, f.values)
		case f.name == "availability-zone":
			ok = matchAny(sn.AZ, f.values)
		case f.name == "cidr-block" || f.name == "cidr-block-association.cidr-block":
			ok = matchAny(sn.CIDR, f.values)
		case f.name == "state":
			ok = matchAny("available", f.values)
		case f.name == "owner-id":
			ok = matchAny(s.opts.Account, f.values)
		case f.name == "tag-key":
			for k := range sn.Tags {
				ok = ok || matchAny(k, f.values)
			}
		case strings.HasPrefix(f.name, "tag:"):
			ok = matchTag(sn.Tags, f.name[len("tag:"):], f.values)
		default:
			return false, errorf(CodeInvalidParameterValue, "The filter '%s' is invalid", f.name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func (s *Server) describeSubnets(form url.Values) (any, *fakeapi.QueryError) {
	size, e := pageSize(form)
	if e != nil {
		return nil, e
	}
	after, page, e := startAfter(form)
	if e != nil {
		return nil, e
	}
	ids := fakeapi.QueryList(form, "SubnetId")
	fs := filters(form)

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if !strings.HasPrefix(id, "subnet-") {
			return nil, errorf(CodeSubnetMalformed, "Invalid id: \"%s\"", id)
		}
		if s.subnets[id] == nil {
			return nil, errorf(CodeSubnetNotFound, "The subnet ID '%s' does not exist", id)
		}
	}
	var cand []string
	if len(ids) > 0 {
		cand = slices.Compact(slices.Sorted(slices.Values(ids)))
	} else {
		cand = slices.Sorted(maps.Keys(s.subnets))
	}
	out := &describeSubnetsResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, id := range cand {
		if id <= after {
			continue
		}
		sn := s.subnets[id]
		ok, e := s.subnetMatch(sn, fs)
		if e != nil {
			return nil, e
		}
		if !ok {
			continue
		}
		if size > 0 && len(out.SubnetSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.SubnetSet.Items[size-1].SubnetID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		out.SubnetSet.Items = append(out.SubnetSet.Items, xmlSubnet{
			SubnetID:                sn.ID,
			SubnetArn:               "arn:aws:ec2:" + s.opts.Region + ":" + s.opts.Account + ":subnet/" + sn.ID,
			State:                   "available",
			OwnerID:                 s.opts.Account,
			VpcID:                   sn.VPC,
			CidrBlock:               sn.prefix.String(),
			AvailableIPAddressCount: sn.available(),
			AvailabilityZone:        sn.AZ,
			TagSet:                  fakeapi.TagSet(sn.Tags),
		})
	}
	return out, nil
}

// ---- DescribeNetworkInterfaces ----

type xmlPrivateIP struct {
	PrivateIPAddress string `xml:"privateIpAddress"`
	Primary          bool   `xml:"primary"`
}

type xmlPrefix struct {
	Ipv4Prefix string `xml:"ipv4Prefix"`
}

type xmlAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	InstanceID          string `xml:"instanceId"`
	InstanceOwnerID     string `xml:"instanceOwnerId"`
	DeviceIndex         int    `xml:"deviceIndex"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xmlOperator struct {
	Managed         bool   `xml:"managed"`
	Principal       string `xml:"principal,omitempty"`
	HiddenByDefault bool   `xml:"hiddenByDefault"`
}

type xmlInterface struct {
	NetworkInterfaceID    string                         `xml:"networkInterfaceId"`
	SubnetID              string                         `xml:"subnetId"`
	VpcID                 string                         `xml:"vpcId"`
	AvailabilityZone      string                         `xml:"availabilityZone"`
	Description           string                         `xml:"description"`
	OwnerID               string                         `xml:"ownerId"`
	RequesterID           string                         `xml:"requesterId,omitempty"`
	RequesterManaged      bool                           `xml:"requesterManaged"`
	Status                string                         `xml:"status"`
	MacAddress            string                         `xml:"macAddress"`
	PrivateIPAddress      string                         `xml:"privateIpAddress"`
	SourceDestCheck       bool                           `xml:"sourceDestCheck"`
	InterfaceType         string                         `xml:"interfaceType"`
	Attachment            *xmlAttachment                 `xml:"attachment"`
	TagSet                fakeapi.XMLSet[fakeapi.XMLTag] `xml:"tagSet"`
	PrivateIPAddressesSet fakeapi.XMLSet[xmlPrivateIP]   `xml:"privateIpAddressesSet"`
	Ipv4PrefixSet         *fakeapi.XMLSet[xmlPrefix]     `xml:"ipv4PrefixSet"`
	Ipv6AddressesSet      fakeapi.XMLSet[struct{}]       `xml:"ipv6AddressesSet"`
	Operator              *xmlOperator                   `xml:"operator"`
}

type describeInterfacesResponse struct {
	XMLName             xml.Name                     `xml:"DescribeNetworkInterfacesResponse"`
	Xmlns               string                       `xml:"xmlns,attr"`
	RequestID           string                       `xml:"requestId"`
	NetworkInterfaceSet fakeapi.XMLSet[xmlInterface] `xml:"networkInterfaceSet"`
	NextToken           string                       `xml:"nextToken,omitempty"`
}

func (s *Server) interfaceMatch(in *Interface, fs []filter) (bool, *fakeapi.QueryError) {
	for _, f := range fs {
		var ok bool
		switch {
		case f.name == "network-interface-id":
			ok = matchAny(in.ID, f.values)
		case f.name == "subnet-id":
			ok = matchAny(in.Subnet, f.values)
		case f.name == "vpc-id":
			ok = matchAny(in.VPC, f.values)
		case f.name == "availability-zone":
			ok = matchAny(in.AZ, f.values)
		case f.name == "status":
			ok = matchAny(in.Status, f.values)
		case f.name == "description":
			ok = matchAny(in.Description, f.values)
		case f.name == "interface-type":
			ok = matchAny(in.Type, f.values)
		case f.name == "requester-managed":
			ok = matchAny(strconv.FormatBool(in.RequesterManaged), f.values)
		case f.name == "requester-id":
			ok = matchAny(in.RequesterID, f.values)
		case f.name == "attachment.instance-id":
			ok = in.Instance != "" && matchAny(in.Instance, f.values)
		case f.name == "private-ip-address" || f.name == "addresses.private-ip-address":
			for _, ip := range in.IPs {
				ok = ok || matchAny(ip, f.values)
			}
		case f.name == "tag-key":
			for k := range in.Tags {
				ok = ok || matchAny(k, f.values)
			}
		case strings.HasPrefix(f.name, "tag:"):
			ok = matchTag(in.Tags, f.name[len("tag:"):], f.values)
		default:
			return false, errorf(CodeInvalidParameterValue, "The filter '%s' is invalid", f.name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func (s *Server) toXML(in *Interface) xmlInterface {
	x := xmlInterface{
		NetworkInterfaceID: in.ID,
		SubnetID:           in.Subnet,
		VpcID:              in.VPC,
		AvailabilityZone:   in.AZ,
		Description:        in.Description,
		OwnerID:            s.opts.Account,
		RequesterID:        in.RequesterID,
		RequesterManaged:   in.RequesterManaged,
		Status:             in.Status,
		MacAddress:         in.MAC,
		SourceDestCheck:    true,
		InterfaceType:      in.Type,
		TagSet:             fakeapi.TagSet(in.Tags),
	}
	for i, ip := range in.IPs {
		if i == 0 {
			x.PrivateIPAddress = ip
		}
		x.PrivateIPAddressesSet.Items = append(x.PrivateIPAddressesSet.Items, xmlPrivateIP{PrivateIPAddress: ip, Primary: i == 0})
	}
	if len(in.Prefixes) > 0 {
		x.Ipv4PrefixSet = &fakeapi.XMLSet[xmlPrefix]{}
		for _, p := range in.Prefixes {
			x.Ipv4PrefixSet.Items = append(x.Ipv4PrefixSet.Items, xmlPrefix{Ipv4Prefix: p})
		}
	}
	if in.Instance != "" {
		x.Attachment = &xmlAttachment{
			AttachmentID:        "eni-attach-" + strings.TrimPrefix(in.ID, "eni-"),
			InstanceID:          in.Instance,
			InstanceOwnerID:     s.opts.Account,
			Status:              "attached",
			AttachTime:          "2024-03-01T12:00:00.000Z",
			DeleteOnTermination: true,
		}
	}
	x.Operator = &xmlOperator{Managed: in.OperatorManaged, HiddenByDefault: in.OperatorManaged}
	if in.OperatorManaged {
		x.Operator.Principal = in.OperatorPrincipal
	}
	return x
}

func checkENI(id string) *fakeapi.QueryError {
	if !strings.HasPrefix(id, "eni-") || len(id) < len("eni-")+8 {
		return errorf(CodeInterfaceMalformed, "Invalid id: \"%s\" (expecting \"eni-...\")", id)
	}
	return nil
}

func (s *Server) describeInterfaces(form url.Values) (any, *fakeapi.QueryError) {
	size, e := pageSize(form)
	if e != nil {
		return nil, e
	}
	ids := fakeapi.QueryList(form, "NetworkInterfaceId")
	if len(ids) > 0 && size > 0 {
		return nil, errorf(CodeInvalidParameterCombination, "The parameter NetworkInterfaceIds cannot be used with the parameter MaxResults")
	}
	after, page, e := startAfter(form)
	if e != nil {
		return nil, e
	}
	includeManaged := form.Get("IncludeManagedResources") == "true"
	fs := filters(form)

	s.mu.Lock()
	defer s.mu.Unlock()
	var cand []string
	if len(ids) > 0 {
		for _, id := range ids {
			if e := checkENI(id); e != nil {
				return nil, e
			}
			if in := s.ifaces[id]; in == nil || (in.OperatorManaged && !includeManaged) {
				return nil, errorf(CodeInterfaceNotFound, "The networkInterface ID '%s' does not exist", id)
			}
		}
		cand = slices.Compact(slices.Sorted(slices.Values(ids)))
	} else {
		all := s.sortedIDs()
		cand = all[sort.SearchStrings(all, after):]
		if len(cand) > 0 && cand[0] == after {
			cand = cand[1:]
		}
	}
	out := &describeInterfacesResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, id := range cand {
		in := s.ifaces[id]
		if in.OperatorManaged && !includeManaged {
			continue
		}
		ok, e := s.interfaceMatch(in, fs)
		if e != nil {
			return nil, e
		}
		if !ok {
			continue
		}
		if size > 0 && len(out.NetworkInterfaceSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.NetworkInterfaceSet.Items[size-1].NetworkInterfaceID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		out.NetworkInterfaceSet.Items = append(out.NetworkInterfaceSet.Items, s.toXML(in))
	}
	return out, nil
}

// ---- DeleteNetworkInterface ----

type deleteResponse struct {
	XMLName   xml.Name `xml:"DeleteNetworkInterfaceResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Return    bool     `xml:"return"`
}

func (s *Server) deleteInterface(form url.Values) (any, *fakeapi.QueryError) {
	id := form.Get("NetworkInterfaceId")
	if id == "" {
		return nil, errorf(CodeMissingParameter, "The request must contain the parameter NetworkInterfaceId")
	}
	if e := checkENI(id); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.ifaces[id]
	if in == nil {
		return nil, errorf(CodeInterfaceNotFound, "The networkInterface ID '%s' does not exist", id)
	}
	if in.Instance != "" || in.Status != "available" {
		return nil, errorf(CodeInterfaceInUse, "The interface %s is currently in use.", id)
	}
	s.remove(id)
	if s.LoseResponse() {
		return nil, errorf(CodeInternalError, "An internal error has occurred")
	}
	return &deleteResponse{Xmlns: Namespace, RequestID: s.requestID(), Return: true}, nil
}
