package state

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reclaim.dev/reclaim/base/jsonstr"
	"reclaim.dev/reclaim/reconcile/engine"
)

// journalEncoder writes a whole journal, {saveID, pending, dropped}, as
// json.Marshal would, byte for byte, but encodes each pending mark once and
// keeps the marks sorted between calls: a run that deletes in parallel
// holds the marks of all the batches in flight, and a store that writes
// them all with every batch (a ConfigMap's) would otherwise encode and
// sort them anew each time.
type journalEncoder struct {
	mu     sync.Mutex
	marks  map[string]*encodedMark
	sorted []*encodedMark // every mark of marks, by id
	fresh  []*encodedMark
	merged []*encodedMark
	buf    bytes.Buffer
	gen    uint64
}

// encodedMark is a pending mark as `"id":{...}`, for the mark it was made of.
type encodedMark struct {
	id  string
	p   engine.Pending
	b   []byte
	gen uint64
}

// write hands the journal's JSON to w, which must not keep it.
func (e *journalEncoder) write(saveID string, pending map[string]engine.Pending, dropped []string, w func([]byte) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.encode(saveID, pending, dropped)
	if err != nil {
		return err
	}
	return w(b)
}

func (e *journalEncoder) encode(saveID string, pending map[string]engine.Pending, dropped []string) ([]byte, error) {
	if e.marks == nil {
		e.marks = map[string]*encodedMark{}
	}
	e.gen++
	e.fresh = e.fresh[:0]
	for id, p := range pending {
		m := e.marks[id]
		switch {
		case m == nil:
			m = &encodedMark{id: id}
			e.marks[id] = m
			e.fresh = append(e.fresh, m)
		case m.p == p && m.b != nil:
			m.gen = e.gen
			continue
		}
		b, err := appendMark(m.b[:0], id, p)
		if err != nil {
			e.marks, e.sorted = nil, nil // start over on the next call
			return nil, err
		}
		m.p, m.b, m.gen = p, b, e.gen
	}
	// The marks still there, in order, and the new ones merged in.
	kept := e.sorted[:0]
	for _, m := range e.sorted {
		if m.gen == e.gen {
			kept = append(kept, m)
		} else {
			delete(e.marks, m.id)
		}
	}
	clear(e.sorted[len(kept):])
	slices.SortFunc(e.fresh, func(a, b *encodedMark) int { return strings.Compare(a.id, b.id) })
	merged := e.merged[:0]
	i, k := 0, 0
	for i < len(kept) || k < len(e.fresh) {
		if k == len(e.fresh) || (i < len(kept) && kept[i].id < e.fresh[k].id) {
			merged = append(merged, kept[i])
			i++
		} else {
			merged = append(merged, e.fresh[k])
			k++
		}
	}
	e.sorted, e.merged = merged, kept[:0]
	clear(e.fresh)

	b := &e.buf
	b.Reset()
	b.WriteString(`{"saveID":`)
	b.Write(jsonstr.Append(b.AvailableBuffer(), saveID))
	b.WriteString(`,"pending":`)
	if pending == nil {
		b.WriteString("null")
	} else {
		b.WriteByte('{')
		for i, m := range e.sorted {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m.b)
		}
		b.WriteByte('}')
	}
	if len(dropped) > 0 {
		d, err := json.Marshal(dropped)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"dropped":`)
		b.Write(d)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendMark appends `"id":` and the mark as json.Marshal writes an
// engine.Pending (TestAppendMarkWritesEveryField holds the two together).
func appendMark(b []byte, id string, p engine.Pending) ([]byte, error) {
	b = jsonstr.Append(b, id)
	b = jsonstr.Append(append(b, `:{"kind":`...), p.Kind)
	t, err := p.Started.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(append(b, `,"started":`...), t...)
	b = jsonstr.Append(append(b, `,"reason":`...), p.Reason)
	if p.Identity != "" {
		b = jsonstr.Append(append(b, `,"identity":`...), p.Identity)
	}
	if p.Run != "" {
		b = jsonstr.Append(append(b, `,"run":`...), p.Run)
	}
	b = strconv.AppendInt(append(b, `,"sizeGB":`...), p.SizeGB, 10)
	if p.Bytes != 0 {
		b = strconv.AppendInt(append(b, `,"bytes":`...), p.Bytes, 10)
	}
	return append(b, '}'), nil
}

// appendChange appends a journal line of one Note's change (set, removed,
// dropped; none empty), without its newline.
func appendChange(b []byte, j engine.Journal) ([]byte, error) {
	b = append(b, '{')
	if len(j.Set) > 0 {
		b = append(b, `"set":{`...)
		for i, id := range slices.Sorted(maps.Keys(j.Set)) {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendMark(b, id, j.Set[id]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	for _, f := range []struct {
		key string
		ids []string
	}{{"removed", j.Removed}, {"dropped", j.Dropped}} {
		if len(f.ids) == 0 {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), f.key...), `":[`...)
		for i, id := range f.ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, id)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// noted is what a store's journal holds for the state last loaded or
// saved: its pending marks as the Notes since left them, and the clocks
// they dropped.
type noted struct {
	pending map[string]engine.Pending
	dropped []string
}

// notedOf is the journal of a state just saved: its marks, nothing dropped.
func notedOf(s engine.State) noted {
	p := maps.Clone(s.Pending)
	if p == nil {
		p = map[string]engine.Pending{}
	}
	return noted{pending: p}
}

func (n *noted) apply(j engine.Journal) {
	if n.pending == nil {
		n.pending = make(map[string]engine.Pending, len(j.Set))
	}
	for id, p := range j.Set {
		n.pending[id] = p
	}
	for _, id := range j.Removed {
		delete(n.pending, id)
	}
	n.dropped = append(n.dropped, j.Dropped...)
}
