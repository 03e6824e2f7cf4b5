package state

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/reconcile/engine"
)

// savedFileStore is a file store that saved a state with clocks for ids
// (and a pending mark for the first), and that state as loaded back.
func savedFileStore(t *testing.T, ids ...string) (*FileStore, engine.State) {
	t.Helper()
	ctx := context.Background()
	st := engine.NewState()
	for _, id := range ids {
		st.Seen(id, "", t0)
	}
	st.Pending[ids[0]] = engine.Pending{Kind: "k", Started: t0, Reason: "old"}
	fs := &FileStore{Path: filepath.Join(t.TempDir(), "state.json")}
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	saved, err := (&FileStore{Path: fs.Path}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return fs, saved
}

func mark(i int) engine.Pending {
	return engine.Pending{Kind: "ecr-image", Started: t0.Add(time.Duration(i) * time.Second), Reason: "unused \"old\" <image>", Run: "r", SizeGB: int64(i)}
}

func noteOK(t *testing.T, fs *FileStore, j engine.Journal) {
	t.Helper()
	if err := fs.Note(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

// sameState fails unless got holds want's pending marks and clocks.
func sameState(t *testing.T, got, want engine.State, ids []string) {
	t.Helper()
	if !reflect.DeepEqual(got.Pending, want.Pending) {
		t.Fatalf("pending:\n%v\nwant\n%v", got.Pending, want.Pending)
	}
	for _, id := range ids {
		_, g := got.Clock(id)
		_, w := want.Clock(id)
		if g != w {
			t.Fatalf("clock of %s: %v, want %v", id, g, w)
		}
	}
}

// The file store's journal, a line appended a Note, loads as the whole
// journal of the same changes would, and as the ConfigMap store's (one
// whole value) does: for random changes (fixed seed), through compactions,
// reloads mid-run and changes noted twice (as after a failed Note).
func TestFileJournalReplaysAsTheWholeJournal(t *testing.T) {
	defer func(n int) { compactAt = n }(compactAt)
	compactAt = 4 << 10
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(52, 1))
	var ids []string
	for i := range 60 {
		ids = append(ids, fmt.Sprintf("ecr:123456789012/us-east-1/r%d&<x>@sha256:%02d", i%5, i))
	}
	fs, saved := savedFileStore(t, ids...)
	want := notedOf(saved)
	var enc journalEncoder
	cm := &ConfigMapStore{Client: rvClientset(), Namespace: "reclaim", Name: "reclaim-state"}
	if err := cm.Save(ctx, saved); err != nil {
		t.Fatal(err)
	}
	lines, compactions := 0, 0
	for step := range 400 {
		var j engine.Journal
		touched := map[string]bool{}
		for range rng.IntN(6) {
			id := ids[rng.IntN(len(ids))]
			if touched[id] {
				continue
			}
			touched[id] = true
			if rng.IntN(3) > 0 {
				if j.Set == nil {
					j.Set = map[string]engine.Pending{}
				}
				j.Set[id] = mark(step)
			} else {
				j.Removed = append(j.Removed, id)
			}
		}
		if rng.IntN(5) == 0 {
			j.Dropped = append(j.Dropped, ids[rng.IntN(len(ids))])
		}
		noteOK(t, fs, j)
		if rng.IntN(10) == 0 {
			noteOK(t, fs, j)
		}
		if err := cm.Note(ctx, j); err != nil {
			t.Fatal(err)
		}
		want.apply(j)
		if step%100 == 99 {
			fs = &FileStore{Path: fs.Path}
			if _, err := fs.Load(ctx); err != nil {
				t.Fatal(err)
			}
		}
		b, err := enc.encode(saved.SaveID, want.pending, want.dropped)
		if err != nil {
			t.Fatal(err)
		}
		whole, _, err := journaled(saved.Clone(), b, "whole")
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&FileStore{Path: fs.Path}).Load(ctx)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		sameState(t, got, whole, ids)
		if step%10 == 0 {
			got, err := (&ConfigMapStore{Client: cm.Client, Namespace: "reclaim", Name: "reclaim-state"}).Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sameState(t, got, whole, ids)
		}
		jb, _ := os.ReadFile(fs.journal())
		n := bytes.Count(jb, []byte{'\n'})
		if n < lines {
			compactions++
		}
		lines = n
		if fs.appends != nil && len(jb) > max(compactAt, 4*fs.whole) {
			t.Fatalf("step %d: a journal of %d bytes, past its bound (whole line %d)", step, len(jb), fs.whole)
		}
	}
	if compactions < 3 {
		t.Fatalf("%d compactions", compactions)
	}
}

// A torn last line (a Note killed while appending: it never returned, so
// its deletes were never sent) is ignored; a bad line before it, or a bad
// line that was written whole, is an error naming the file and the fix.
func TestFileJournalTornAndCorruptLines(t *testing.T) {
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	fs, _ := savedFileStore(t, ids...)
	noteOK(t, fs, engine.Journal{Set: map[string]engine.Pending{"b": mark(1)}, Removed: []string{"a"}})
	noteOK(t, fs, engine.Journal{Set: map[string]engine.Pending{"c": mark(2)}, Dropped: []string{"b"}})
	jb, err := os.ReadFile(fs.journal())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(jb), "\n")
	if len(lines) != 3 || lines[2] != "" {
		t.Fatalf("want 2 lines:\n%s", jb)
	}
	first, last := lines[0], lines[1]

	// Torn anywhere: the first Note's change only.
	for cut := 0; cut < len(last)-1; cut += 7 {
		if err := os.WriteFile(fs.journal(), []byte(first+last[:cut]), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := (&FileStore{Path: fs.Path}).Load(ctx)
		if err != nil {
			t.Fatalf("torn at %d: %v", cut, err)
		}
		if _, ok := got.Pending["c"]; ok || len(got.Pending) != 1 {
			t.Fatalf("torn at %d: pending %v", cut, got.Pending)
		}
		if _, ok := got.Clock("b"); !ok {
			t.Fatalf("torn at %d: the torn line's dropped clock was dropped", cut)
		}
	}
	// The next run's first Note writes the journal whole, torn line gone.
	run2 := &FileStore{Path: fs.Path}
	if _, err := run2.Load(ctx); err != nil {
		t.Fatal(err)
	}
	noteOK(t, run2, engine.Journal{Removed: []string{"b"}})
	noteOK(t, run2, engine.Journal{Set: map[string]engine.Pending{"a": mark(3)}})
	if got, err := (&FileStore{Path: fs.Path}).Load(ctx); err != nil || len(got.Pending) != 1 || got.Pending["a"] != mark(3) {
		t.Fatalf("after the torn line: %v %v", got.Pending, err)
	}

	for name, journal := range map[string]string{
		"line 2": first + "{\"set\":{\"x\n" + last, // a bad line before the last
		"line 3": first + last + "{\"set\":{\"x\n", // a bad last line, terminated: not torn
		"line 1": first[:len(first)/2],             // the whole line is never torn
	} {
		if err := os.WriteFile(fs.journal(), []byte(journal), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := (&FileStore{Path: fs.Path}).Load(ctx)
		if err == nil || !strings.Contains(err.Error(), fs.journal()+" "+name+" is not valid JSON") || !strings.Contains(err.Error(), "remove it") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// Past compactAt the journal is written whole again, holding the same.
func TestFileJournalCompacts(t *testing.T) {
	defer func(n int) { compactAt = n }(compactAt)
	compactAt = 2 << 10
	ids := []string{"a", "b"}
	fs, _ := savedFileStore(t, ids...)
	for i := range 300 {
		noteOK(t, fs, engine.Journal{Set: map[string]engine.Pending{fmt.Sprint("m", i): mark(i)}, Removed: []string{fmt.Sprint("m", i-1)}})
	}
	noteOK(t, fs, engine.Journal{Dropped: []string{"b"}})
	jb, _ := os.ReadFile(fs.journal())
	if len(jb) > compactAt {
		t.Fatalf("%d bytes after 300 Notes of one mark each", len(jb))
	}
	got, err := (&FileStore{Path: fs.Path}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]engine.Pending{"a": {Kind: "k", Started: t0, Reason: "old"}, "m299": mark(299)}
	if !reflect.DeepEqual(got.Pending, want) {
		t.Fatalf("pending %v", got.Pending)
	}
	if _, ok := got.Clock("b"); ok {
		t.Fatal("a dropped clock came back")
	}
}

// A failed append (here: to a journal closed underneath) writes the
// journal whole.
func TestFileJournalRewritesAfterAFailedAppend(t *testing.T) {
	ids := []string{"a", "b"}
	fs, _ := savedFileStore(t, ids...)
	noteOK(t, fs, engine.Journal{Set: map[string]engine.Pending{"b": mark(1)}})
	fs.appends.Close()
	noteOK(t, fs, engine.Journal{Removed: []string{"a"}})
	got, err := (&FileStore{Path: fs.Path}).Load(context.Background())
	if err != nil || !reflect.DeepEqual(got.Pending, map[string]engine.Pending{"b": mark(1)}) {
		t.Fatalf("%v %v", got.Pending, err)
	}
}

// A journal written before journals had lines (one object, no newline)
// loads, and a Note after it goes on from what it held.
func TestFileJournalReadsTheOldFormat(t *testing.T) {
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	fs, saved := savedFileStore(t, ids...)
	old := `{"saveID":"` + saved.SaveID + `","pending":{"c":{"kind":"k","started":"2026-11-01T12:00:00Z","reason":"r","sizeGB":0}},"dropped":["b"]}`
	if err := os.WriteFile(fs.journal(), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	run2 := &FileStore{Path: fs.Path}
	got, err := run2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := engine.Pending{Kind: "k", Started: t0, Reason: "r"}
	want := engine.NewState()
	want.Seen("a", "", t0)
	want.Seen("c", "", t0)
	want.Pending["c"] = c
	sameState(t, got, want, ids)
	noteOK(t, run2, engine.Journal{Set: map[string]engine.Pending{"a": mark(1)}})
	noteOK(t, run2, engine.Journal{Removed: []string{"c"}})
	want.Pending = map[string]engine.Pending{"a": mark(1)}
	if got, err = (&FileStore{Path: fs.Path}).Load(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, got, want, ids)
}
