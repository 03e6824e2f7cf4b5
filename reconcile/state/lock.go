package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/reconcile/engine"
)

var (
	_ engine.Locker = (*FileStore)(nil)
	_ engine.Locker = (*ConfigMapStore)(nil)
)

// Lock takes an exclusive flock on Path + ".lock"; the kernel releases it
// when the process dies, so a killed run never leaves it held.
func (f *FileStore) Lock(_ context.Context, holder string) (func(), error) {
	path := f.Path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock state: %w", err)
	}
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock state: %w", err)
	}
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		who, _ := os.ReadFile(path)
		fd.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("state %s is held by another reclaim run (%s): runs must not overlap; wait for it, or stop it", f.Path, orDefault(string(who), "unknown"))
		}
		return nil, fmt.Errorf("lock state: %w", err)
	}
	_ = fd.Truncate(0)
	_, _ = fd.WriteAt([]byte(holder+" pid "+strconv.Itoa(os.Getpid())), 0)
	return func() {
		_ = syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
		fd.Close()
	}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// lockTTL is how long a ConfigMap lock lasts unless renewed: a killed run's
// lock expires by then. The holder renews it every lockTTL/3 and with
// every journal entry.
var lockTTL = 10 * time.Minute

type lockRecord struct {
	Holder string    `json:"holder"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

const lockKey = "lock.json"

// Lock records the holder in the journal ConfigMap (resourceVersion
// checked, so of two runs taking it at once one fails), renews it while the
// run goes on, and clears it on unlock.
func (c *ConfigMapStore) Lock(ctx context.Context, holder string) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := c.readJournal(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock state %s: %w", c.where(), err)
	}
	now := time.Now()
	var held lockRecord
	if b := data[lockKey]; b != "" && json.Unmarshal([]byte(b), &held) == nil && held.Holder != "" && held.Until.After(now) {
		return nil, fmt.Errorf("state %s is held by another reclaim run (%s since %s, until %s unless renewed): runs must not overlap; wait for it, or stop it",
			c.where(), held.Holder, held.Since.UTC().Format(time.RFC3339), held.Until.UTC().Format(time.RFC3339))
	}
	c.lock = &lockRecord{Holder: holder, Since: now, Until: now.Add(lockTTL)}
	if err := c.writeJournal(ctx, c.journal); err != nil {
		c.lock = nil
		return nil, fmt.Errorf("lock state %s: %w", c.where(), err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				c.mu.Lock()
				if c.lock != nil {
					c.lock.Until = time.Now().Add(lockTTL)
					_ = c.writeJournal(context.Background(), c.journal)
				}
				c.mu.Unlock()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		c.lock = nil
		_ = c.writeJournal(context.Background(), c.journal)
	}, nil
}

// writeJournal writes the journal ConfigMap: the journal and the lock.
// The caller holds c.mu.
func (c *ConfigMapStore) writeJournal(ctx context.Context, journal string) error {
	data := map[string]string{}
	if journal != "" {
		data[journalKey] = journal
	}
	if c.lock != nil {
		b, _ := json.Marshal(c.lock)
		data[lockKey] = string(b)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-journal", Namespace: c.Namespace, ResourceVersion: c.journalRV,
		Labels: map[string]string{"app.kubernetes.io/name": "reclaim", "app.kubernetes.io/component": "state", saveLabel: c.Name}},
		Data: data}
	out, err := c.put(ctx, cm)
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%s-journal: another reclaim run changed it meanwhile (%v)", c.Name, err)
	}
	if err != nil {
		return fmt.Errorf("%s-journal: %w", c.Name, err)
	}
	c.journalRV, c.journal = out.ResourceVersion, journal
	return nil
}
