package reconcile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// AuditRecord is one line of the audit log: what, why, when, and the result.
type AuditRecord struct {
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

// AuditLog appends JSON lines and syncs each one: a killed run loses nothing it
// reported as done.
type AuditLog struct {
	mu sync.Mutex
	w  io.Writer
	f  *os.File
}

// OpenAudit opens path for appending; "-" writes to stdout.
func OpenAudit(path string) (*AuditLog, error) {
	if path == "-" {
		return &AuditLog{w: os.Stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w (set audit.file to a writable path)", err)
	}
	return &AuditLog{w: f, f: f}, nil
}

// NewAudit writes to w (tests, demo).
func NewAudit(w io.Writer) *AuditLog { return &AuditLog{w: w} }

func (a *AuditLog) Write(r AuditRecord) error {
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

func (a *AuditLog) Close() error {
	if a.f != nil {
		return a.f.Close()
	}
	return nil
}
