package engine

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Digests are the clocks of content-addressed resources, packed. An id
// GROUP@sha256:<64 hex> whose clock has no identity (the digest is one: an
// ECR image) is kept in its group's table as the digest's first 8 bytes and
// two times, 24 bytes, instead of a map entry of some 220; on disk it is
// about 9 bytes. So the clocks of a backlog of a million images fit the pod
// and the stock ConfigMap store. Two digests of one group that share their
// first 64 bits would share a clock: for 10,000 images, odds of 1 in 10^11.
type Digests map[string]*clockGroup

// clockGroup is one group's clocks: keys sorted, plus what this run added.
type clockGroup struct {
	keys []uint64
	vals []clockVal
	more map[uint64]clockVal
}

// clockVal is one clock: FirstSeen and Announced in Unix nanoseconds (0:
// never announced). A first of 0 marks a dropped clock until the next pack.
// kept is this run's: the plan decided to keep it (rules.decide).
type clockVal struct {
	first, announced int64
	kept             bool
}

const digestMark = "@sha256:"

// splitDigest splits a content-addressed id into its group and key.
func splitDigest(id string) (group string, key uint64, ok bool) {
	at := strings.LastIndex(id, digestMark)
	if at <= 0 {
		return "", 0, false
	}
	h := id[at+len(digestMark):]
	if len(h) != 64 || strings.ToLower(h) != h {
		return "", 0, false
	}
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(h)); err != nil {
		return "", 0, false
	}
	return id[:at], binary.BigEndian.Uint64(b[:8]), true
}

func (g *clockGroup) get(key uint64) (clockVal, bool) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		return g.vals[i], g.vals[i].first != 0
	}
	v, ok := g.more[key]
	return v, ok
}

func (g *clockGroup) set(key uint64, v clockVal) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		g.vals[i] = v
		return
	}
	if g.more == nil {
		g.more = map[uint64]clockVal{}
	}
	g.more[key] = v
}

func (g *clockGroup) drop(key uint64) {
	if i, ok := slices.BinarySearch(g.keys, key); ok {
		g.vals[i].first = 0
		return
	}
	delete(g.more, key)
}

// dropUnkept drops every clock this run did not keep.
func (g *clockGroup) dropUnkept() {
	for i := range g.vals {
		if !g.vals[i].kept {
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

// packed returns the group's live clocks sorted, in new slices, with kept
// cleared (a new run decides anew).
func (g *clockGroup) packed() *clockGroup {
	n := g.len()
	out := &clockGroup{keys: make([]uint64, 0, n), vals: make([]clockVal, 0, n)}
	extra := make([]uint64, 0, len(g.more))
	for k := range g.more {
		extra = append(extra, k)
	}
	slices.Sort(extra)
	i, j := 0, 0
	for i < len(g.keys) || j < len(extra) {
		if j == len(extra) || i < len(g.keys) && g.keys[i] < extra[j] {
			if v := g.vals[i]; v.first != 0 {
				v.kept = false
				out.keys, out.vals = append(out.keys, g.keys[i]), append(out.vals, v)
			}
			i++
			continue
		}
		v := g.more[extra[j]]
		v.kept = false
		out.keys, out.vals = append(out.keys, extra[j]), append(out.vals, v)
		j++
	}
	return out
}

// clone copies the digests' clocks, packed.
func (d Digests) clone() Digests {
	out := make(Digests, len(d))
	for k, g := range d {
		if p := g.packed(); len(p.keys) > 0 {
			out[k] = p
		}
	}
	return out
}

// Counts are the live clocks of each group.
func (d Digests) Counts() map[string]int {
	out := make(map[string]int, len(d))
	for k, g := range d {
		out[k] = g.len()
	}
	return out
}

func (d Digests) count() int {
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
func (d Digests) MarshalJSON() ([]byte, error) {
	out := make(map[string]string, len(d))
	for name, g := range d {
		p := g.packed()
		if len(p.keys) == 0 {
			continue
		}
		var times []int64
		for _, v := range p.vals {
			times = append(times, v.first)
			if v.announced != 0 {
				times = append(times, v.announced)
			}
		}
		slices.Sort(times)
		times = slices.Compact(times)
		idx := func(t int64) uint64 { i, _ := slices.BinarySearch(times, t); return uint64(i) }
		b := make([]byte, 0, 16*len(times)+10*len(p.keys))
		b = binary.AppendUvarint(b, uint64(len(times)))
		prev := int64(0)
		for _, t := range times {
			b = binary.AppendVarint(b, t-prev)
			prev = t
		}
		b = binary.AppendUvarint(b, uint64(len(p.keys)))
		var last uint64
		for i, k := range p.keys {
			v := p.vals[i]
			b = binary.AppendUvarint(b, k-last)
			last = k
			if v.announced == 0 {
				b = binary.AppendUvarint(b, idx(v.first)<<1)
			} else {
				b = binary.AppendUvarint(b, idx(v.first)<<1|1)
				b = binary.AppendUvarint(b, idx(v.announced))
			}
		}
		out[name] = base64.StdEncoding.EncodeToString(b)
	}
	return json.Marshal(out)
}

var errDigests = errors.New("truncated or malformed")

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Digests) UnmarshalJSON(data []byte) error {
	var in map[string]string
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*d = make(Digests, len(in))
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
	times := make([]int64, nt)
	prev := int64(0)
	for i := range times {
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, errDigests
		}
		b = b[n:]
		prev += v
		times[i] = prev
	}
	at := func(i uint64) (int64, error) {
		if i >= uint64(len(times)) {
			return 0, errDigests
		}
		return times[i], nil
	}
	nk, err := uv()
	if err != nil || nk > uint64(len(b)) {
		return nil, errDigests
	}
	g := &clockGroup{keys: make([]uint64, nk), vals: make([]clockVal, nk)}
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
		if g.vals[i].first, err = at(fa >> 1); err != nil || g.vals[i].first == 0 {
			return nil, errDigests
		}
		if fa&1 == 1 {
			ai, err := uv()
			if err != nil {
				return nil, err
			}
			if g.vals[i].announced, err = at(ai); err != nil {
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
