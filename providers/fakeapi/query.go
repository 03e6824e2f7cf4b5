package fakeapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// What the fakes of EC2's Query API (ec2fake's interfaces, ebsfake's
// volumes) share: how they answer, the error they answer with EC2's
// status, list parameters, page tokens and tag sets.

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// WriteQueryXML writes an EC2 Query protocol answer: the XML declaration,
// then v. A v that does not encode is answered InternalError, with the
// request id requestID gives.
func WriteQueryXML(w http.ResponseWriter, v any, requestID func() string) {
	b, err := xml.Marshal(v)
	if err != nil {
		QueryErrorf("InternalError", "fakeapi: encode: %v", err).Write(w, requestID())
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(xmlHeader))
	_, _ = w.Write(b)
}

// Write writes e as EC2 does: the Response/Errors/Error shape, with
// RequestID (not success's requestId).
func (e *QueryError) Write(w http.ResponseWriter, requestID string) {
	var b strings.Builder
	b.WriteString(xmlHeader + "<Response><Errors><Error><Code>")
	_ = xml.EscapeText(&b, []byte(e.Code))
	b.WriteString("</Code><Message>")
	_ = xml.EscapeText(&b, []byte(e.Message))
	b.WriteString("</Message></Error></Errors><RequestID>" + requestID + "</RequestID></Response>")
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(b.String()))
}

// QueryError is an error answer: HTTP status, Code and Message.
type QueryError struct {
	Status        int
	Code, Message string
}

// QueryErrorf is the error code answers, with EC2's status for it
// (QueryStatus).
func QueryErrorf(code, format string, args ...any) *QueryError {
	return &QueryError{Status: QueryStatus(code), Code: code, Message: fmt.Sprintf(format, args...)}
}

// QueryStatus is EC2's HTTP status for an error code: 503 for
// RequestLimitExceeded and Unavailable, 500 for InternalError, 403 for
// UnauthorizedOperation, 401 for AuthFailure, 412 for DryRunOperation,
// else 400.
func QueryStatus(code string) int {
	switch code {
	case "RequestLimitExceeded", "Unavailable":
		return http.StatusServiceUnavailable
	case "InternalError":
		return http.StatusInternalServerError
	case "UnauthorizedOperation":
		return http.StatusForbidden
	case "AuthFailure":
		return http.StatusUnauthorized
	case "DryRunOperation":
		return http.StatusPreconditionFailed
	}
	return http.StatusBadRequest
}

// QueryList reads a flattened list parameter: name.1, name.2, … (it stops
// at the first gap).
func QueryList(form url.Values, name string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := form[name+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v...)
	}
}

// PageToken is a listing's NextToken: the page it starts (2 or more), what
// the previous page ended with, and the fingerprint of the query it was
// issued for (QueryFingerprint), so that it is refused with another.
type PageToken struct {
	Page         int
	After, Query string
}

func (t PageToken) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(t.Page) + "|" + t.After + "|" + t.Query))
}

// ParsePageToken reads a PageToken; false for "" or anything else a fake
// did not issue.
func ParsePageToken(s string) (PageToken, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if s == "" || err != nil {
		return PageToken{}, false
	}
	p := strings.SplitN(string(b), "|", 3)
	if len(p) != 3 {
		return PageToken{}, false
	}
	n, err := strconv.Atoi(p[0])
	if err != nil || n < 2 {
		return PageToken{}, false
	}
	return PageToken{Page: n, After: p[1], Query: p[2]}, true
}

// QueryFingerprint identifies a request's query apart from its paging
// (NextToken, MaxResults) and signature.
func QueryFingerprint(form url.Values) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(form)) {
		if k == "NextToken" || k == "MaxResults" || k == "Signature" {
			continue
		}
		fmt.Fprintf(h, "%s=%q;", k, form[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// XMLSet is an EC2 list in XML: its items, each an <item>.
type XMLSet[T any] struct {
	Items []T `xml:"item"`
}

// XMLTag is one tag in a tagSet.
type XMLTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// TagSet is tags as EC2 lists them, sorted by key.
func TagSet(tags map[string]string) XMLSet[XMLTag] {
	var out XMLSet[XMLTag]
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out.Items = append(out.Items, XMLTag{Key: k, Value: tags[k]})
	}
	return out
}

// Answer is what an injected fault answers, with status: its Message, else
// words, what the service says for its Code.
func (f *Fault) Answer(status int, words string) *QueryError {
	msg := f.Message
	if msg == "" {
		msg = words
	}
	return &QueryError{Status: status, Code: f.Code, Message: msg}
}
