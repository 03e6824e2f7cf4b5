package state

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reclaim.dev/reclaim/base/jsonstr"
	"reclaim.dev/reclaim/reconcile/engine"
)

// journalEncoder writes a journal as json.Marshal of {saveID, Journal}
// would, byte for byte, but encodes each pending mark once and keeps the
// marks sorted between calls: a run that deletes in parallel notes every
// batch with the marks of all the batches in flight, and encoding and
// sorting them anew each time was most of a large trim's CPU.
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
func (e *journalEncoder) write(saveID string, j engine.Journal, w func([]byte) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.encode(saveID, j)
	if err != nil {
		return err
	}
	return w(b)
}

func (e *journalEncoder) encode(saveID string, j engine.Journal) ([]byte, error) {
	if e.marks == nil {
		e.marks = map[string]*encodedMark{}
	}
	e.gen++
	e.fresh = e.fresh[:0]
	for id, p := range j.Pending {
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
	if j.Pending == nil {
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
	if len(j.Dropped) > 0 {
		d, err := json.Marshal(j.Dropped)
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
