// Package published is what a cluster's agent publishes and the deleter
// reads instead of the cluster's API server: one record per cluster, its
// in-use references (the collector's ClusterRefs), who the cluster is, and
// when and how completely it was read. The record is versioned, gzipped
// JSON, one object per cluster replaced whole.
package published

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"time"
	"unique"

	"reclaim.dev/reclaim/inventory"
)

// Version is the record's schema. A reader refuses a version it does not
// know: what it cannot read is never evidence that nothing is used.
const Version = 1

// MaxSize bounds a record once decompressed when its reader sets no bound
// of its own (Decode): a record larger than this is refused rather than
// read into memory. A deleter bounds each record by
// fleet.records.maxRecordSize (DecodeLimit).
const MaxSize = 1 << 30

// ErrTooLarge marks a record that decompresses to more than its reader's
// bound: it is refused, having decompressed no more than the bound.
var ErrTooLarge = errors.New("record too large")

// Identity is who published: where the cluster lives, and what tells it
// apart from a same-name cluster elsewhere.
type Identity struct {
	// Name is the cluster's name in GKE or EKS (its cloud name).
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Account  string `json:"account,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location"`
	// CA is the SHA-256 of the API server's CA bundle, hex; discovery
	// lists the same bundle for the cluster. Required: a record without
	// it holds.
	CA string `json:"caSHA256,omitempty"`
	// KubeSystemUID is the kube-system namespace's UID: a cluster
	// recreated under the same name has another.
	KubeSystemUID string `json:"kubeSystemUID"`
}

// Place is where the identity says the cluster lives.
func (id Identity) Place() inventory.Place {
	return inventory.Place{Platform: id.Platform, Account: id.Account, Project: id.Project, Location: id.Location}
}

// Record is one cluster's published read.
type Record struct {
	Version int       `json:"version"`
	Cluster Identity  `json:"cluster"`
	TakenAt time.Time `json:"takenAt"`
	// Agent is the reclaim version that wrote it.
	Agent string `json:"agent,omitempty"`
	// Refs are what the cluster uses, with each read's completeness. The
	// limits a deleter puts on a cluster (Projects, Accounts, Subnets) are
	// the deleter's, never the agent's.
	Refs inventory.ClusterRefs `json:"refs"`
}

// Items counts what the record says the cluster uses: the size a sudden
// drop of is implausible.
func (r *Record) Items() int {
	c := &r.Refs
	n := len(c.PVs) + len(c.PVCs) + len(c.Images) + len(c.Jobs) + len(c.CronJobs) + len(c.Pods) + len(c.Nodes)
	for _, t := range c.Taps {
		n += t.Items
	}
	return n
}

// Key is the object a cluster's record is at under prefix: by place and
// name, so that same-name clusters in two accounts never share one.
func Key(prefix string, place inventory.Place, name string) string {
	scope := place.Account
	if place.Platform == inventory.GKE {
		scope = place.Project
	}
	return path.Join(prefix, "clusters", place.Platform, scope, place.Location, name+".json.gz")
}

// CAHash is the SHA-256 of a CA bundle, as Identity.CA holds it.
func CAHash(ca []byte) string {
	if len(bytes.TrimSpace(ca)) == 0 {
		return ""
	}
	s := sha256.Sum256(bytes.TrimSpace(ca))
	return hex.EncodeToString(s[:])
}

// wire is the record as written: each tap's data as its own JSON, decoded
// by the tap that knows its type.
type wire struct {
	Record
	Taps map[string]wireTap `json:"taps,omitempty"`
}

type wireTap struct {
	Complete bool            `json:"complete"`
	Problem  string          `json:"problem,omitempty"`
	Items    int             `json:"items"`
	Version  string          `json:"version,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Encode writes r, gzipped.
func Encode(w io.Writer, r Record) error {
	out := wire{Record: r}
	out.Version = Version
	out.Refs.Taps = nil
	for name, t := range r.Refs.Taps {
		data, err := json.Marshal(t.Data)
		if err != nil {
			return fmt.Errorf("tap %s: %w", name, err)
		}
		if out.Taps == nil {
			out.Taps = map[string]wireTap{}
		}
		out.Taps[name] = wireTap{Complete: t.Complete, Problem: t.Problem, Items: t.Items, Version: t.Version, Data: data}
	}
	zw := gzip.NewWriter(w)
	if err := json.NewEncoder(zw).Encode(out); err != nil {
		return err
	}
	return zw.Close()
}

// Decoder turns a tap's published data back into what its sink made.
type Decoder func(data []byte) (any, error)

// Decode reads a record Encode wrote, of at most MaxSize bytes once
// decompressed (DecodeLimit).
func Decode(r io.Reader, decoders map[string]Decoder) (Record, error) {
	return DecodeLimit(r, MaxSize, decoders)
}

// DecodeLimit reads a record Encode wrote. decoders are the taps whose
// data the reader uses, by name: a tap without one is left out, as if not
// read, so whatever relies on it is held. A truncated or corrupt object,
// an unknown version, or one that decompresses to more than max bytes (an
// error wrapping ErrTooLarge) is an error. The record is decoded as it is
// decompressed: no more than max+1 bytes are ever decompressed, and a
// body that is not JSON fails at its first bytes.
func DecodeLimit(r io.Reader, max int64, decoders map[string]Decoder) (Record, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return Record{}, fmt.Errorf("not a gzipped record: %w", err)
	}
	lr := &capped{r: zr, max: max}
	var in wire
	dec := json.NewDecoder(lr)
	if err := dec.Decode(&in); err != nil {
		switch {
		case lr.over():
			return Record{}, fmt.Errorf("larger than %d bytes once decompressed: %w", max, ErrTooLarge)
		case isJSON(err):
			return Record{}, fmt.Errorf("not a record: %w", err)
		}
		return Record{}, fmt.Errorf("truncated or corrupt: %w", err)
	}
	// Read to the end: gzip checks its length and checksum there, so a
	// truncated object fails here rather than standing for its prefix;
	// nothing but white space may follow the record.
	rest, err := io.ReadAll(io.MultiReader(dec.Buffered(), lr))
	switch {
	case lr.over():
		return Record{}, fmt.Errorf("larger than %d bytes once decompressed: %w", max, ErrTooLarge)
	case err != nil:
		return Record{}, fmt.Errorf("truncated or corrupt: %w", err)
	case len(bytes.TrimSpace(rest)) > 0:
		return Record{}, errors.New("not a record: data after the record")
	}
	if in.Version != Version {
		return Record{}, fmt.Errorf("record version %d, this reclaim reads version %d — upgrade the older of the agent and the deleter", in.Version, Version)
	}
	rec := in.Record
	shareStrings(&rec.Refs)
	rec.Refs.Taps = nil
	for name, t := range in.Taps {
		dec := decoders[name]
		if dec == nil {
			continue
		}
		data, err := dec(t.Data)
		if err != nil {
			return Record{}, fmt.Errorf("tap %s: %w", name, err)
		}
		if rec.Refs.Taps == nil {
			rec.Refs.Taps = map[string]inventory.Tapped{}
		}
		rec.Refs.Taps[name] = inventory.Tapped{Complete: t.Complete, Problem: t.Problem, Items: t.Items, Version: t.Version, Data: data}
	}
	return rec, nil
}

// capped reads at most max+1 bytes of r: one past max says r is over.
type capped struct {
	r      io.Reader
	n, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.over() {
		return 0, ErrTooLarge
	}
	if left := c.max + 1 - c.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.over() {
		return n, ErrTooLarge
	}
	return n, err
}

func (c *capped) over() bool { return c.n > c.max }

// isJSON: err is the JSON's, not the gzip stream's.
func isJSON(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// Claimed is the size a gzipped body says it decompresses to (its
// trailer's, modulo 4 GiB): what a reader can set aside before reading it.
// A body that decompresses to more than it claims is corrupt, so a reader
// that decodes with the claim as its bound decompresses no more.
func Claimed(body []byte) (int64, bool) {
	if len(body) < 18 { // a gzip header and trailer
		return 0, false
	}
	return int64(binary.LittleEndian.Uint32(body[len(body)-4:])), true
}

// DecodeAs is the Decoder of a tap whose sink's result is a T.
func DecodeAs[T any](data []byte) (any, error) {
	var v T
	if len(data) == 0 || string(data) == "null" {
		return v, nil
	}
	err := json.Unmarshal(data, &v)
	return v, err
}

// Expect is what the deleter knows of the cluster a record must be.
type Expect struct {
	Name  string
	Place inventory.Place
	// CA is the hash of the CA bundle discovery listed, or the config
	// pins ("" unknown); CAFrom says which, for people ("" discovery).
	CA, CAFrom string
	// KubeSystemUID is the one configured, or seen in earlier records
	// ("" unknown).
	KubeSystemUID string
	// MaxAge is how old a record may be at Now.
	MaxAge time.Duration
	Now    time.Time
	// Written is when the store wrote the record's object (S3's
	// LastModified, GCS's updated; zero if unknown): it bounds the
	// record's read time (ReadAt).
	Written time.Time
}

// ClockSkew is how far an agent's clock may be from the deleter's or
// the store's before its record's time is doubted.
const ClockSkew = 5 * time.Minute

// ReadAt is when the record was read, as far as a reader can tell: its
// takenAt, or the time the store wrote it if that is earlier. An agent
// whose clock runs ahead cannot make its record younger than its object.
func (r *Record) ReadAt(written time.Time) time.Time {
	if !written.IsZero() && written.Before(r.TakenAt) {
		return written
	}
	return r.TakenAt
}

// ErrMismatch marks a record of another cluster than the one expected.
var ErrMismatch = errors.New("another cluster's record")

// Check says why r cannot stand for the cluster e describes: stale, of
// another cluster, or read incompletely. None: it can.
func (r *Record) Check(e Expect) []string {
	var out []string
	id := r.Cluster
	if id.Name != e.Name || !samePlace(id.Place(), e.Place) {
		out = append(out, fmt.Sprintf("the record says it is cluster %q in %s, not %q in %s: %v", id.Name, id.Place(), e.Name, e.Place, ErrMismatch))
	}
	if id.CA == "" {
		out = append(out, "the record names no API server CA (caSHA256), so reclaim cannot tell which cluster wrote it: upgrade the cluster's agent")
	} else if e.CA != "" && id.CA != e.CA {
		from := cmp.Or(e.CAFrom, "the one discovery lists for the cluster")
		out = append(out, fmt.Sprintf("the record's API server CA (sha256 %.12s…) is not %s (%.12s…): %v", id.CA, from, e.CA, ErrMismatch))
	}
	if e.KubeSystemUID != "" && id.KubeSystemUID != e.KubeSystemUID {
		out = append(out, fmt.Sprintf("the record's kube-system namespace UID %s is not the cluster's %s (recreated, or another cluster): %v", id.KubeSystemUID, e.KubeSystemUID, ErrMismatch))
	}
	if id.KubeSystemUID == "" {
		out = append(out, "the record names no kube-system namespace UID, so reclaim cannot tell which cluster wrote it")
	}
	read := r.ReadAt(e.Written)
	switch age := e.Now.Sub(read); {
	case r.TakenAt.IsZero():
		out = append(out, "the record has no read time")
	case e.Now.Sub(r.TakenAt) < -ClockSkew:
		out = append(out, fmt.Sprintf("the record says it was read at %s, in the future: the agent's clock or the record is wrong", r.TakenAt.UTC().Format(time.RFC3339)))
	case age > e.MaxAge && !read.Equal(r.TakenAt):
		out = append(out, fmt.Sprintf("the store wrote the record %s ago (at %s, though it says it was read at %s), more than fleet.records.maxAge %s: is the cluster's agent running, and its clock right?",
			age.Round(time.Minute), read.UTC().Format(time.RFC3339), r.TakenAt.UTC().Format(time.RFC3339), e.MaxAge))
	case age > e.MaxAge:
		out = append(out, fmt.Sprintf("the record was read %s ago (at %s), more than fleet.records.maxAge %s: is the cluster's agent running?", age.Round(time.Minute), r.TakenAt.UTC().Format(time.RFC3339), e.MaxAge))
	}
	return out
}

// samePlace: every field both know agrees (a region holds its zones).
func samePlace(a, b inventory.Place) bool {
	eq := func(x, y string) bool { return x == "" || y == "" || x == y }
	gke := a.Platform == inventory.GKE || b.Platform == inventory.GKE
	loc := a.Location == "" || b.Location == "" || a.Location == b.Location ||
		gke && (inventory.RegionOfZone(a.Location) == b.Location || a.Location == inventory.RegionOfZone(b.Location))
	return eq(a.Platform, b.Platform) && eq(a.Account, b.Account) && eq(a.Project, b.Project) && loc
}

// shareStrings makes the strings a fleet's records repeat (namespaces,
// phases, nodes, owners, label keys and values) one copy each: a deleter
// holds every cluster's record at once, and JSON gives each its own.
func shareStrings(c *inventory.ClusterRefs) {
	in := func(s *string) {
		if *s != "" {
			*s = unique.Make(*s).Value()
		}
	}
	labels := func(m map[string]string) {
		for k, v := range m {
			delete(m, k)
			m[unique.Make(k).Value()] = unique.Make(v).Value()
		}
	}
	owner := func(o *inventory.Owner) {
		if o != nil {
			in(&o.Kind)
			in(&o.Name)
		}
	}
	for i := range c.Pods {
		p := &c.Pods[i]
		in(&p.Namespace)
		in(&p.Phase)
		in(&p.Node)
		in(&p.Retention)
		owner(p.Owner)
		labels(p.Labels)
	}
	for i := range c.Jobs {
		j := &c.Jobs[i]
		in(&j.Namespace)
		in(&j.Status)
		in(&j.Retention)
		owner(j.CronJob)
		labels(j.Labels)
	}
	for i := range c.PVCs {
		in(&c.PVCs[i].Namespace)
	}
	for i := range c.Images {
		in(&c.Images[i].Ref.Repo.Account)
		in(&c.Images[i].Ref.Repo.Region)
		in(&c.Images[i].Ref.Repo.Name)
	}
}
