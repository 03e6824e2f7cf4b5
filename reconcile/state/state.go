// Package state keeps reclaim's memory between runs (grace clocks, pending
// deletes, quota history) in a file, a ConfigMap, or memory. The planner
// never does I/O; the runner loads the state before a pass and the applier
// saves it.
package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
// from before the state's save is already in it.
func journaled(s engine.State, b []byte, where string) (engine.State, error) {
	if len(b) == 0 {
		return s, nil
	}
	var j struct {
		SaveID string `json:"saveID"`
		engine.Journal
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return engine.State{}, fmt.Errorf("state journal %s is not valid JSON (%v): remove it; the deletes it recorded as started are then confirmed by the listing only", where, err)
	}
	if j.SaveID != "" && j.SaveID == s.SaveID {
		s.Apply(j.Journal)
	}
	return s, nil
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

// Note applies a batch's journal to the saved state.
func (m *MemoryStore) Note(_ context.Context, j engine.Journal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Apply(j)
	m.Notes++
	return nil
}
