package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Done finds a delete recorded done by the run that started it, and only
// that: a failed attempt, or another run's, is not it.
func TestDoneFindsTheAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Now()
	for _, r := range []Record{
		{Time: now, Action: "delete", ID: "a", Result: "deleted", RunID: "r1", Attempt: "r1"},
		{Time: now, Action: "delete", ID: "b", Result: "failed", RunID: "r1", Attempt: "r1"},
		{Time: now, Action: "delete", ID: "c", Result: "already-gone", RunID: "r0"}, // before Attempt: the run's own
		{Time: now, Action: "snapshot", ID: "d", Result: "created", RunID: "r1"},
	} {
		if err := l.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Done(map[string]string{"a": "r1", "b": "r1", "c": "r0", "d": "r1", "e": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["a"] || !got["c"] {
		t.Fatalf("%v", got)
	}
	if got, _ := l.Done(map[string]string{"a": "r2"}); got["a"] {
		t.Fatal("another run's attempt")
	}
	if _, err := New(os.Stdout).Done(map[string]string{"a": "r1"}); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("stdout: %v", err)
	}
}

// A run killed in mid-write leaves a torn last line; the next run's first
// record starts a line of its own, so only the torn one is lost.
func TestOpenEndsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(`{"action":"delete","id":"a","result":"deleted"}`+"\n"+`{"action":"delete","id":"b","res`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Record{Action: "delete", ID: "c", Result: "deleted"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[1] != `{"action":"delete","id":"b","res` || !strings.Contains(lines[2], `"id":"c"`) {
		t.Fatalf("lines %q", lines)
	}
	// A whole log is left as it is.
	l, _ = Open(path)
	_ = l.Close()
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Fatalf("a whole log was changed: %q", again)
	}
}
