package notify

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Spool keeps what a target could not deliver, one file a message, until a
// later run sends it: a failed delivery never loses a report. Dir is the
// target's own directory ("" disables the spool); Ext names its files.
type Spool struct {
	Dir string
	Ext string
	Now func() time.Time
}

// Files lists the spooled messages, oldest first.
func (s Spool) Files() ([]string, error) {
	if s.Dir == "" {
		return nil, nil
	}
	es, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, s.Ext) && !strings.HasPrefix(n, ".") {
			out = append(out, filepath.Join(s.Dir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Flush sends the spooled messages, oldest first, removing each once sent;
// it stops at the first that fails and returns how many are left.
func (s Spool) Flush(send func(raw []byte) error) (left int, err error) {
	files, err := s.Files()
	if err != nil {
		return 0, fmt.Errorf("read the spool: %w", err)
	}
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return len(files) - i, fmt.Errorf("read the spool: %w", err)
		}
		if err := send(raw); err != nil {
			return len(files) - i, err
		}
		if err := os.Remove(f); err != nil {
			// Sent, but it would be sent again: say so rather than loop.
			return len(files) - i - 1, fmt.Errorf("sent %s but could not remove it: %w", f, err)
		}
	}
	return 0, nil
}

// Put writes raw to a new file of the spool (a temporary name, then
// renamed, so a half-written message is never sent) and returns its path.
func (s Spool) Put(raw []byte) (string, error) {
	if s.Dir == "" {
		return "", errors.New("no spool directory is configured")
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(r[:]) + s.Ext
	tmp, err := os.CreateTemp(s.Dir, ".spool-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	path := filepath.Join(s.Dir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
