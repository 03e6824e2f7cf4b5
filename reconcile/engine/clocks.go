package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// digests are the clocks of content-addressed resources, packed (the
// State's Digests field; its readers need only Counts). An id
// GROUP@sha256:<64 hex> whose clock has no identity (the digest is one: an
// ECR image) is kept in its group's table as the digest's first 8 bytes and
// two indexes into the group's few distinct times, 16 bytes, instead of a
// map entry of some 220; on disk it is about 9 bytes. So the clocks of a
// backlog of a million images fit the pod and the stock ConfigMap store.
// Two digests of one group that share their first 64 bits would share a
// clock: for 10,000 images, odds of 1 in 10^11.
type digests map[string]*clockGroup

// clockGroup is one group's clocks: keys sorted and their values, shared
// with the state it was cloned from until one is written (a plan of a
// million candidates does not hold their clocks twice), plus what this
// run added.
type clockGroup struct {
	keys  []uint64   // never written in place
	vals  []clockVal // parallel to keys; copied before a write unless owned
	owned bool
	times []int64 // what clockVal indexes, Unix ns; times[0] is 0 (none)
	more  map[uint64]moreClock
	kept  []uint64 // bits parallel to keys: this run keeps the clock
}

// clockVal is one clock: FirstSeen and Announced as indexes in times. A
// first of 0 marks a clock dropped until the next pack.
type clockVal struct{ first, announced uint32 }

type moreClock struct {
	first, announced int64
	kept             bool
}

// clock is a clock's times in Unix ns (announced 0: never).
type clock struct{ first, announced int64 }

func (g *clockGroup) timeIndex(ns int64) uint32 {
	if ns == 0 {
		return 0
	}
	if len(g.times) == 0 {
		g.times = []int64{0}
	}
	for i := len(g.times) - 1; i > 0; i-- { // few, the newest last
		if g.times[i] == ns {
			return uint32(i)
		}
	}
	g.times = append(g.times, ns)
	return uint32(len(g.times) - 1)
}

func (g *clockGroup) get(key uint64) (clock, bool) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		if v := g.vals[i]; v.first != 0 {
			return clock{g.times[v.first], g.times[v.announced]}, true
		}
		return clock{}, false
	}
	v, ok := g.more[key]
	return clock{v.first, v.announced}, ok
}

// own makes vals the group's own before a write.
func (g *clockGroup) own() {
	if !g.owned {
		g.vals, g.owned = slices.Clone(g.vals), true
	}
}

func (g *clockGroup) set(key uint64, c clock) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		v := clockVal{g.timeIndex(c.first), g.timeIndex(c.announced)}
		if g.vals[i] != v {
			g.own()
			g.vals[i] = v
		}
		return
	}
	if g.more == nil {
		g.more = map[uint64]moreClock{}
	}
	m := g.more[key]
	m.first, m.announced = c.first, c.announced
	g.more[key] = m
}

func (g *clockGroup) drop(key uint64) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		if g.vals[i].first != 0 {
			g.own()
			g.vals[i].first = 0
		}
		return
	}
	delete(g.more, key)
}

// find is the index of key's live clock in the sorted table.
func (g *clockGroup) find(key uint64) (int, bool) {
	i, ok := slices.BinarySearch(g.keys, key)
	return i, ok && g.vals[i].first != 0
}

// markKept records that this run keeps the clock at index i of the table.
func (g *clockGroup) markKept(i int) {
	if g.kept == nil {
		g.kept = make([]uint64, (len(g.keys)+63)/64)
	}
	g.kept[i/64] |= 1 << (i % 64)
}

// keep records that this run keeps key's clock.
func (g *clockGroup) keep(key uint64) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		g.markKept(i)
		return
	}
	if m, ok := g.more[key]; ok {
		m.kept = true
		g.more[key] = m
	}
}

func (g *clockGroup) isKept(i int) bool { return g.kept != nil && g.kept[i/64]&(1<<(i%64)) != 0 }

// dropUnkept drops every clock this run did not keep.
func (g *clockGroup) dropUnkept() {
	for i := range g.vals {
		if g.vals[i].first != 0 && !g.isKept(i) {
			g.own()
			g.vals[i].first = 0
		}
	}
	for k, v := range g.more {
		if !v.kept {
			delete(g.more, k)
		}
	}
}

// len counts the live clocks.
func (g *clockGroup) len() int {
	n := len(g.more)
	for i := range g.vals {
		if g.vals[i].first != 0 {
			n++
		}
	}
	return n
}

// packed returns the group's live clocks sorted, none kept yet (a new run
// decides anew). With share, and nothing added or dropped, it shares the
// group's arrays: from then on neither writes them in place.
func (g *clockGroup) packed(share bool) *clockGroup {
	live := g.len()
	if share && len(g.more) == 0 && live == len(g.keys) {
		g.owned = false
		return &clockGroup{keys: g.keys, vals: g.vals, times: slices.Clone(g.times)}
	}
	out := &clockGroup{keys: make([]uint64, 0, live), vals: make([]clockVal, 0, live), owned: true}
	extra := make([]uint64, 0, len(g.more))
	for k := range g.more {
		extra = append(extra, k)
	}
	slices.Sort(extra)
	i, j := 0, 0
	for i < len(g.keys) || j < len(extra) {
		var key uint64
		var c clock
		if j == len(extra) || i < len(g.keys) && g.keys[i] < extra[j] {
			v := g.vals[i]
			i++
			if v.first == 0 {
				continue
			}
			key, c = g.keys[i-1], clock{g.times[v.first], g.times[v.announced]}
		} else {
			m := g.more[extra[j]]
			key, c = extra[j], clock{m.first, m.announced}
			j++
		}
		out.keys = append(out.keys, key)
		out.vals = append(out.vals, clockVal{out.timeIndex(c.first), out.timeIndex(c.announced)})
	}
	return out
}

// clone copies the digests' clocks, packed.
func (d digests) clone() digests {
	out := make(digests, len(d))
	for k, g := range d {
		if p := g.packed(true); len(p.keys) > 0 {
			out[k] = p
		}
	}
	return out
}

// Counts are the live clocks of each group.
func (d digests) Counts() map[string]int {
	out := make(map[string]int, len(d))
	for k, g := range d {
		out[k] = g.len()
	}
	return out
}

func (d digests) count() int {
	n := 0
	for _, g := range d {
		n += g.len()
	}
	return n
}

// MarshalJSON writes each group as base64 of: the count of distinct times
// and each as a zigzag varint delta from the one before (sorted); the count
// of clocks and, for each in key order, the key's delta from the one
// before, then (first's time index << 1 | announced?) and announced's index.
func (d digests) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := d.writeJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeJSON writes what MarshalJSON returns a group at a time, each
// base64-encoded as it is written: a million clocks are never one string.
func (d digests) writeJSON(w io.Writer) error {
	names := slices.Sorted(maps.Keys(d))
	bw := bufio.NewWriter(w)
	bw.WriteByte('{')
	first := true
	for _, name := range names {
		b := d[name].encode()
		if b == nil {
			continue
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		key, err := json.Marshal(name)
		if err != nil {
			return err
		}
		bw.Write(key)
		bw.WriteString(`:"`)
		enc := base64.NewEncoder(base64.StdEncoding, bw)
		enc.Write(b)
		enc.Close()
		bw.WriteByte('"')
	}
	bw.WriteByte('}')
	return bw.Flush()
}

// encode is a group's clocks as MarshalJSON describes, nil when it has none.
func (g *clockGroup) encode() []byte {
	p := g.packed(false)
	if len(p.keys) == 0 {
		return nil
	}
	// The times sorted, and each clock's indexes into them.
	order := make([]int, len(p.times))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(p.times[a], p.times[b]) })
	rank := make([]uint64, len(p.times))
	b := make([]byte, 0, 16*len(p.times)+10*len(p.keys))
	b = binary.AppendUvarint(b, uint64(len(p.times)-1)) // times[0], 0, is implied
	prev := int64(0)
	n := uint64(0)
	for _, i := range order {
		if p.times[i] == 0 {
			continue
		}
		b = binary.AppendVarint(b, p.times[i]-prev)
		prev = p.times[i]
		rank[i] = n
		n++
	}
	b = binary.AppendUvarint(b, uint64(len(p.keys)))
	var last uint64
	for i, k := range p.keys {
		v := p.vals[i]
		b = binary.AppendUvarint(b, k-last)
		last = k
		if v.announced == 0 {
			b = binary.AppendUvarint(b, rank[v.first]<<1)
		} else {
			b = binary.AppendUvarint(b, rank[v.first]<<1|1)
			b = binary.AppendUvarint(b, rank[v.announced])
		}
	}
	return b
}

var errDigests = errors.New("truncated or malformed")

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *digests) UnmarshalJSON(data []byte) error {
	var in map[string]string
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*d = make(digests, len(in))
	for name, s := range in {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("digests %s: %w", name, err)
		}
		g, err := decodeGroup(b)
		if err != nil {
			return fmt.Errorf("digests %s: %w", name, err)
		}
		(*d)[name] = g
	}
	return nil
}

func decodeGroup(b []byte) (*clockGroup, error) {
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errDigests
		}
		b = b[n:]
		return v, nil
	}
	nt, err := uv()
	if err != nil || nt > uint64(len(b)) {
		return nil, errDigests
	}
	g := &clockGroup{times: make([]int64, nt+1), owned: true}
	prev := int64(0)
	for i := range nt {
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, errDigests
		}
		b = b[n:]
		prev += v
		if prev == 0 {
			return nil, errDigests
		}
		g.times[i+1] = prev
	}
	index := func(i uint64) (uint32, error) {
		if i >= nt {
			return 0, errDigests
		}
		return uint32(i + 1), nil
	}
	nk, err := uv()
	if err != nil || nk > uint64(len(b)) {
		return nil, errDigests
	}
	g.keys, g.vals = make([]uint64, nk), make([]clockVal, nk)
	var last uint64
	for i := range g.keys {
		dk, err := uv()
		if err != nil || i > 0 && dk == 0 {
			return nil, errDigests
		}
		last += dk
		g.keys[i] = last
		fa, err := uv()
		if err != nil {
			return nil, err
		}
		if g.vals[i].first, err = index(fa >> 1); err != nil {
			return nil, err
		}
		if fa&1 == 1 {
			ai, err := uv()
			if err != nil {
				return nil, err
			}
			if g.vals[i].announced, err = index(ai); err != nil {
				return nil, err
			}
		}
	}
	if len(b) != 0 {
		return nil, errDigests
	}
	return g, nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

const digestMark = "@sha256:"

// splitDigest splits a content-addressed id into its group and key.
func splitDigest(id string) (group string, key uint64, ok bool) {
	at := strings.LastIndex(id, digestMark)
	if at <= 0 {
		return "", 0, false
	}
	var b [32]byte
	if !inventory.DecodeSHA256Hex(&b, id[at+len(digestMark):]) { // the canonical digest only
		return "", 0, false
	}
	return id[:at], binary.BigEndian.Uint64(b[:8]), true
}
