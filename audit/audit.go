// Package audit is reclaim's audit log: one JSON line per delete (what, why,
// when, result), synced as it is written.
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Record is one line of the audit log: what, why, when, and the result.
type Record struct {
	Time   time.Time `json:"time"`
	Action string    `json:"action"` // delete, snapshot
	Kind   string    `json:"kind"`
	ID     string    `json:"id"`
	Reason string    `json:"reason"`
	// Result: deleted, already-gone, confirmed-deleted (a delete of an earlier,
	// interrupted run that is now known to have happened), skipped, failed.
	Result   string `json:"result"`
	Error    string `json:"error,omitempty"`
	SizeGB   int64  `json:"sizeGB,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	RunID    string `json:"runID"`
}

// Log appends JSON lines and syncs each one: a killed run loses nothing it
// reported as done.
type Log struct {
	mu sync.Mutex
	w  io.Writer
	f  *os.File
}

// Open opens path for appending; "-" writes to stdout.
func Open(path string) (*Log, error) {
	if path == "-" {
		return &Log{w: os.Stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w (set audit.file to a writable path)", err)
	}
	return &Log{w: f, f: f}, nil
}

// New writes to w (tests, demo).
func New(w io.Writer) *Log { return &Log{w: w} }

func (a *Log) Write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	if a.f != nil {
		return a.f.Sync()
	}
	return nil
}

func (a *Log) Close() error {
	if a.f != nil {
		return a.f.Close()
	}
	return nil
}
