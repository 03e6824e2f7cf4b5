package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"reclaim.dev/reclaim/reconcile/engine"
)

// FileStore keeps state in a local JSON file, written atomically, and a
// delete batch's changes in a small journal beside it (Path + ".journal"),
// so that a batch costs what it changed, not the size of the state.
type FileStore struct {
	Path   string
	saveID string // of the state last loaded or saved
	enc    journalEncoder
}

func (f *FileStore) String() string { return "file " + f.Path }

func (f *FileStore) journal() string { return f.Path + ".journal" }

func (f *FileStore) Load(context.Context) (engine.State, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
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
	return journaled(s, j, f.journal())
}

func (f *FileStore) Save(_ context.Context, s engine.State) error {
	s.SaveID = newSaveID()
	if err := writeAtomicWith(f.Path, s.WriteJSON); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	f.saveID = s.SaveID
	// The journal followed the previous save: it is in this one.
	if err := os.Remove(f.journal()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// Note records a batch's changes for the state last saved.
func (f *FileStore) Note(_ context.Context, j engine.Journal) error {
	if f.saveID == "" {
		return fmt.Errorf("save state journal: %s was not saved by this run: save the state first", f.Path)
	}
	return f.enc.write(f.saveID, j, func(jb []byte) error {
		if err := writeAtomic(f.journal(), jb); err != nil {
			return fmt.Errorf("save state journal: %w", err)
		}
		return nil
	})
}

// writeAtomic writes b to path through a synced temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	return writeAtomicWith(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
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
