// Package state keeps reclaim's memory between runs (grace clocks, pending
// deletes, quota history) in a file, a ConfigMap, or memory. The planner
// never does I/O; the runner loads the state before a pass and the applier
// saves it.
package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"reclaim.dev/reclaim/reconcile/engine"
)

var (
	_ engine.Journaled = (*FileStore)(nil)
	_ engine.Journaled = (*ConfigMapStore)(nil)
	_ engine.Journaled = (*MemoryStore)(nil)
)

// newSaveID names a save (engine.State.SaveID).
func newSaveID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// journaled applies a journal read beside a state if it followed it: one
// from before the state's save is already in it. It returns the state and
// what the journal holds.
//
// A journal is lines: the first is whole ({saveID, pending, dropped}, as
// one written before journals had lines), each later one a Note's change
// ({set, removed, dropped}). The first line is only ever written whole,
// through a rename; a later one is appended, and a process killed while
// appending leaves it torn, unterminated. A torn last line is ignored: its
// Note never returned, so the deletes it marked were never sent, and the
// marks it removed belong to deletes already audited (audit lines are
// synced before every Note), which the next run confirms from the listing
// once (Audit.Done). Anything else that does not parse is an error.
func journaled(s engine.State, b []byte, where string) (engine.State, noted, error) {
	if len(b) == 0 {
		return s, notedOf(s), nil
	}
	var n noted
	for i := 0; len(b) > 0; i++ {
		line, rest, terminated := bytes.Cut(b, []byte{'\n'})
		b = rest
		var l struct {
			SaveID  string                    `json:"saveID"`
			Pending map[string]engine.Pending `json:"pending"`
			Set     map[string]engine.Pending `json:"set"`
			Removed []string                  `json:"removed"`
			Dropped []string                  `json:"dropped"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			if i > 0 && !terminated {
				break // torn
			}
			return engine.State{}, noted{}, fmt.Errorf("state journal %s line %d is not valid JSON (%v): remove it; the deletes it recorded as started are then confirmed by the listing only", where, i+1, err)
		}
		if i > 0 {
			n.apply(engine.Journal{Set: l.Set, Removed: l.Removed, Dropped: l.Dropped})
			continue
		}
		if l.SaveID == "" || l.SaveID != s.SaveID {
			return s, notedOf(s), nil
		}
		n = noted{pending: l.Pending, dropped: l.Dropped}
		if n.pending == nil {
			n.pending = map[string]engine.Pending{}
		}
	}
	s.Pending = maps.Clone(n.pending)
	s.Apply(engine.Journal{Dropped: n.dropped})
	return s, n, nil
}

func decodeState(b []byte, where string) (engine.State, error) {
	s := engine.NewState()
	if len(b) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return engine.State{}, fmt.Errorf("state %s is not valid JSON (%v): fix or remove it; removing it restarts every grace period", where, err)
	}
	if s.Version > engine.StateVersion {
		return engine.State{}, fmt.Errorf("state %s has version %d, newer than this reclaim understands (%d): upgrade reclaim", where, s.Version, engine.StateVersion)
	}
	if s.Resources == nil {
		s.Resources = map[string]engine.Entry{}
	}
	if s.Pending == nil {
		s.Pending = map[string]engine.Pending{}
	}
	return s, nil
}

// MemoryStore keeps state in memory (demo, tests).
type MemoryStore struct {
	mu    sync.Mutex
	state engine.State
	Saves int // whole-state saves
	Notes int // journal entries
}

// NewMemoryStore starts from s.
func NewMemoryStore(s engine.State) *MemoryStore {
	if s.Resources == nil {
		s = engine.NewState()
	}
	return &MemoryStore{state: s.Clone()}
}

func (m *MemoryStore) String() string { return "memory" }

func (m *MemoryStore) Load(context.Context) (engine.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.Clone(), nil
}

func (m *MemoryStore) Save(_ context.Context, s engine.State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s.Clone()
	m.Saves++
	return nil
}

// Note applies a batch's change to the saved state.
func (m *MemoryStore) Note(_ context.Context, j engine.Journal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Apply(j)
	m.Notes++
	return nil
}
