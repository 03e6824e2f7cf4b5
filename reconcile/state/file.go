package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"reclaim.dev/reclaim/reconcile/engine"
)

// FileStore keeps state in a local JSON file, written atomically, and the
// delete batches' changes in a journal beside it (Path + ".journal"), a line
// appended a batch, so that a batch costs what it changed, not the size of
// the state nor of the pending deletes.
type FileStore struct {
	Path string

	mu     sync.Mutex
	saveID string // of the state last loaded or saved
	noted  noted  // what the journal holds
	// appends is the journal, open for appending once this store wrote it
	// whole (a line of whole bytes); size is its size. Nil: the next Note
	// writes it whole.
	appends     *os.File
	size, whole int
	enc         journalEncoder
	line        []byte
}

// compactAt is the size from which the journal is written whole again
// rather than appended to, unless its whole line is larger: so a long
// run's journal stays a few times its pending deletes. (A variable for
// tests.)
var compactAt = 4 << 20

func (f *FileStore) String() string { return "file " + f.Path }

func (f *FileStore) journal() string { return f.Path + ".journal" }

func (f *FileStore) Load(context.Context) (engine.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeJournal()
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		f.saveID, f.noted = "", noted{}
		return engine.NewState(), nil
	}
	if err != nil {
		return engine.State{}, fmt.Errorf("read state: %w", err)
	}
	s, err := decodeState(b, f.Path)
	if err != nil {
		return s, err
	}
	f.saveID = s.SaveID
	j, err := os.ReadFile(f.journal())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return engine.State{}, fmt.Errorf("read state journal: %w", err)
	}
	s, f.noted, err = journaled(s, j, f.journal())
	return s, err
}

func (f *FileStore) Save(_ context.Context, s engine.State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.SaveID = newSaveID()
	if err := writeAtomicWith(f.Path, s.WriteJSON); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	f.saveID, f.noted = s.SaveID, notedOf(s)
	f.closeJournal()
	// The journal followed the previous save: it is in this one.
	if err := os.Remove(f.journal()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// Note records a batch's change for the state last loaded or saved: a line
// appended to the journal and synced, or the journal written whole when
// this store has not written it yet, the append failed, or it grew past
// compactAt.
func (f *FileStore) Note(_ context.Context, j engine.Journal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.saveID == "" {
		return fmt.Errorf("save state journal: %s was not saved by this run: save the state first", f.Path)
	}
	f.noted.apply(j)
	line, err := appendChange(f.line[:0], j)
	if err != nil {
		return fmt.Errorf("save state journal: %w", err)
	}
	f.line = append(line, '\n')
	if f.appends != nil && f.size+len(f.line) <= max(compactAt, 4*f.whole) {
		if _, err := f.appends.Write(f.line); err == nil {
			if err := f.appends.Sync(); err == nil {
				f.size += len(f.line)
				return nil
			}
		}
		// Whatever the append left is replaced whole.
	}
	f.closeJournal()
	return f.enc.write(f.saveID, f.noted.pending, f.noted.dropped, func(jb []byte) error {
		if err := writeAtomic(f.journal(), jb, []byte{'\n'}); err != nil {
			return fmt.Errorf("save state journal: %w", err)
		}
		// Not opened: the next Note writes it whole again.
		if w, err := os.OpenFile(f.journal(), os.O_WRONLY|os.O_APPEND, 0); err == nil {
			f.appends, f.size, f.whole = w, len(jb)+1, len(jb)+1
		}
		return nil
	})
}

// closeJournal stops appending to the journal: the next Note writes it
// whole.
func (f *FileStore) closeJournal() {
	if f.appends != nil {
		f.appends.Close()
		f.appends = nil
	}
}

// writeAtomic writes bs to path through a synced temporary file and a rename.
func writeAtomic(path string, bs ...[]byte) error {
	return writeAtomicWith(path, func(w io.Writer) error {
		for _, b := range bs {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeAtomicWith is writeAtomic of what write writes.
func writeAtomicWith(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".reclaim-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
