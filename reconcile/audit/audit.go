// Package audit is reclaim's audit log: one JSON line per delete (what, why,
// when, result), synced before the state that relies on it is saved.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"reclaim.dev/reclaim/base/jsonstr"
)

// Record is one line of the audit log: what, why, when, and the result.
type Record struct {
	Time   time.Time `json:"time"`
	Action string    `json:"action"` // delete, snapshot
	Kind   string    `json:"kind"`
	ID     string    `json:"id"`
	Reason string    `json:"reason"`
	// Result of a delete: Deleted, AlreadyGone, ConfirmedDeleted, Skipped,
	// Failed, Deferred. Of a snapshot: created, or reused (one started
	// earlier in the same orphan period; snapshot.Created, snapshot.Reused).
	Result   string `json:"result"`
	Error    string `json:"error,omitempty"`
	SizeGB   int64  `json:"sizeGB,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	RunID    string `json:"runID"`
	// Attempt is the run that started the delete: this run's, or, for
	// confirmed-deleted, the interrupted run's. (Attempt, ID) is a delete's
	// idempotency key: it is recorded done once.
	Attempt string `json:"attempt,omitempty"`
}

// Results of one delete, as the audit log records them and the applier's
// outcome reports them.
const (
	Deleted     = "deleted"
	AlreadyGone = "already-gone"
	// ConfirmedDeleted: a delete of an earlier, interrupted run that is now
	// known to have happened (audited, never in an outcome).
	ConfirmedDeleted = "confirmed-deleted"
	Skipped          = "skipped"
	Failed           = "failed"
	// NotAttempted: the run stopped, or what it waits for was not deleted,
	// before its delete was tried (reported, never audited).
	NotAttempted = "not-attempted"
	// Deferred: held back for a snapshot still pending, or for the
	// cluster views it relies on having gone stale before the delete call:
	// nothing was deleted, the clock runs on, and a later run deletes it
	// once the snapshot is done, on fresh views.
	Deferred = "deferred"
)

// Results lists every result an outcome can report, for metrics that start
// each at zero.
var Results = []string{Deleted, AlreadyGone, Skipped, Failed, Deferred, NotAttempted}

// Done reports whether r records a delete as done.
func (r Record) Done() bool {
	return r.Action == "delete" && (r.Result == Deleted || r.Result == AlreadyGone || r.Result == ConfirmedDeleted)
}

func (r Record) attempt() string {
	if r.Attempt != "" {
		return r.Attempt
	}
	return r.RunID
}

// Log appends JSON lines; Sync makes them durable. The applier syncs before
// every state save or journal entry, so a state that no longer holds a
// delete's pending mark never outlives that delete's line, even if the node
// crashes: a line lost with the node leaves the mark, and the next run
// records the delete (Done). One sync a batch, not one a line: a trim of
// 500,000 images spent most of its CPU in fsync.
type Log struct {
	mu    sync.Mutex
	w     io.Writer
	f     *os.File
	sync  interface{ Sync() error }     // nil: nothing to sync (stdout, a buffer)
	dirty bool                          // written since the last Sync
	line  []byte                        // the last line's, reused
	read  func() (io.ReadCloser, error) // nil: the log cannot be read back (stdout)
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
	if err := endTornLine(path, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return &Log{w: f, f: f, sync: f, read: func() (io.ReadCloser, error) { return os.Open(path) }}, nil
}

// endTornLine ends the log's last line when a run killed in mid-write left
// it torn (a write that crosses a page can stop at the page when the
// process is killed): the next record then starts a line of its own, and
// only the torn one is unreadable.
func endTornLine(path string, w io.Writer) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = w.Write([]byte{'\n'})
	}
	return err
}

// New writes to w (tests, demo); Sync syncs w if it has a Sync method.
func New(w io.Writer) *Log {
	l := &Log{w: w}
	l.sync, _ = w.(interface{ Sync() error })
	return l
}

// NewReadable writes to w and reads back through read (tests).
func NewReadable(w io.Writer, read func() io.Reader) *Log {
	return &Log{w: w, read: func() (io.ReadCloser, error) { return io.NopCloser(read()), nil }}
}

// ErrUnreadable: the log goes somewhere it cannot be read back from (stdout).
var ErrUnreadable = errors.New("the audit log cannot be read back")

// Done returns which of the deletes (id → the run that started it) the log
// already records as done, in one pass over it. Only a run interrupted
// between its audit line and its state save asks: the answer keeps its
// confirmation from recording the delete a second time.
func (a *Log) Done(deletes map[string]string) (map[string]bool, error) {
	if a.read == nil {
		return nil, ErrUnreadable
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rc, err := a.read()
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	defer rc.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"delete"`)) {
			continue
		}
		var r Record
		if json.Unmarshal(line, &r) != nil || !r.Done() {
			continue
		}
		if run, ok := deletes[r.ID]; ok && run == r.attempt() {
			out[r.ID] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}

func (a *Log) Write(r Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, err := r.appendJSON(a.line[:0])
	if err != nil {
		return err
	}
	a.line = append(b, '\n')
	if _, err := a.w.Write(a.line); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	a.dirty = true
	return nil
}

// appendJSON appends the record as json.Marshal writes it, without its
// reflection: a trim writes a line per image (TestAppendJSONWritesEveryField
// holds the two together).
func (r Record) appendJSON(b []byte) ([]byte, error) {
	t, err := r.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(append(b, `{"time":`...), t...)
	b = jsonstr.Append(append(b, `,"action":`...), r.Action)
	b = jsonstr.Append(append(b, `,"kind":`...), r.Kind)
	b = jsonstr.Append(append(b, `,"id":`...), r.ID)
	b = jsonstr.Append(append(b, `,"reason":`...), r.Reason)
	b = jsonstr.Append(append(b, `,"result":`...), r.Result)
	if r.Error != "" {
		b = jsonstr.Append(append(b, `,"error":`...), r.Error)
	}
	if r.SizeGB != 0 {
		b = strconv.AppendInt(append(b, `,"sizeGB":`...), r.SizeGB, 10)
	}
	if r.Bytes != 0 {
		b = strconv.AppendInt(append(b, `,"bytes":`...), r.Bytes, 10)
	}
	if r.Snapshot != "" {
		b = jsonstr.Append(append(b, `,"snapshot":`...), r.Snapshot)
	}
	b = jsonstr.Append(append(b, `,"runID":`...), r.RunID)
	if r.Attempt != "" {
		b = jsonstr.Append(append(b, `,"attempt":`...), r.Attempt)
	}
	return append(b, '}'), nil
}

// Sync makes the lines written so far durable (fsync), if any were.
func (a *Log) Sync() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.dirty || a.sync == nil {
		return nil
	}
	if err := a.sync.Sync(); err != nil {
		return fmt.Errorf("sync audit log: %w", err)
	}
	a.dirty = false
	return nil
}

func (a *Log) Close() error {
	if a.f != nil {
		err := a.Sync()
		return errors.Join(err, a.f.Close())
	}
	return nil
}
