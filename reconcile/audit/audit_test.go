package audit

import (
	"errors"
	"os"
	"path/filepath"
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
