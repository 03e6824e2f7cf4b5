// Package state keeps reclaim's memory between runs (grace clocks, pending
// deletes, quota history) in a file, a ConfigMap, or memory. The planner
// never does I/O; the runner loads the state before a pass and the applier
// saves it.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/engine"
)

var (
	_ engine.Store = FileStore{}
	_ engine.Store = (*ConfigMapStore)(nil)
	_ engine.Store = (*MemoryStore)(nil)
)

func decodeState(b []byte, where string) (engine.State, error) {
	s := engine.NewState()
	if len(b) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return engine.State{}, fmt.Errorf("state %s is not valid JSON (%v): fix or remove it; removing it restarts every grace period", where, err)
	}
	if s.Version > engine.StateVersion {
		return engine.State{}, fmt.Errorf("state %s has version %d, newer than this reclaim understands (%d): upgrade reclaim", where, s.Version, engine.StateVersion)
	}
	if s.Resources == nil {
		s.Resources = map[string]engine.Entry{}
	}
	if s.Pending == nil {
		s.Pending = map[string]engine.Pending{}
	}
	return s, nil
}

// FileStore keeps state in a local JSON file, written atomically.
type FileStore struct{ Path string }

func (f FileStore) String() string { return "file " + f.Path }

func (f FileStore) Load(context.Context) (engine.State, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return engine.NewState(), nil
	}
	if err != nil {
		return engine.State{}, fmt.Errorf("read state: %w", err)
	}
	return decodeState(b, f.Path)
}

func (f FileStore) Save(_ context.Context, s engine.State) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".reclaim-state-*")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("save state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// ConfigMapStore keeps state in a ConfigMap, for reclaim running in a cluster.
// Updates use the resourceVersion read by Load, so two overlapping runs cannot
// silently overwrite each other's clocks.
type ConfigMapStore struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
	rv        string
}

const stateKey = "state.json"

func (c *ConfigMapStore) String() string { return "configmap " + c.Namespace + "/" + c.Name }

func (c *ConfigMapStore) Load(ctx context.Context) (engine.State, error) {
	cm, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.rv = ""
		return engine.NewState(), nil
	}
	if err != nil {
		return engine.State{}, fmt.Errorf("read state configmap %s/%s: %w", c.Namespace, c.Name, err)
	}
	c.rv = cm.ResourceVersion
	return decodeState([]byte(cm.Data[stateKey]), "configmap "+c.Namespace+"/"+c.Name)
}

// maxConfigMapState is what a ConfigMap holds (1 MiB), less room for metadata.
const maxConfigMapState = 1<<20 - 16<<10

func (c *ConfigMapStore) Save(ctx context.Context, s engine.State) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if len(b) > maxConfigMapState {
		// Thousands of candidates under their grace period (images, a backlog of
		// finished Jobs) can outgrow it.
		return fmt.Errorf("save state configmap %s/%s: the state is %d bytes (%d clocks), more than a ConfigMap holds (1 MiB) — use state.file on a PersistentVolume, or shorten the grace periods (a backlog of candidates, such as 100,000 finished Jobs past retention, each holds a clock)",
			c.Namespace, c.Name, len(b), len(s.Resources))
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, ResourceVersion: c.rv,
			Labels: map[string]string{"app.kubernetes.io/name": "reclaim", "app.kubernetes.io/component": "state"}},
		Data: map[string]string{stateKey: string(b)},
	}
	var out *corev1.ConfigMap
	if c.rv == "" {
		out, err = c.Client.CoreV1().ConfigMaps(c.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	} else {
		out, err = c.Client.CoreV1().ConfigMaps(c.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("save state configmap %s/%s: another reclaim run changed it meanwhile (%v); this run's clocks are dropped, the next run starts from the other's", c.Namespace, c.Name, err)
	}
	if err != nil {
		return fmt.Errorf("save state configmap %s/%s: %w", c.Namespace, c.Name, err)
	}
	c.rv = out.ResourceVersion
	return nil
}

// MemoryStore keeps state in memory (demo, tests).
type MemoryStore struct {
	mu    sync.Mutex
	state engine.State
	Saves int
}

// NewMemoryStore starts from s.
func NewMemoryStore(s engine.State) *MemoryStore {
	if s.Resources == nil {
		s = engine.NewState()
	}
	return &MemoryStore{state: s.Clone()}
}

func (m *MemoryStore) String() string { return "memory" }

func (m *MemoryStore) Load(context.Context) (engine.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.Clone(), nil
}

func (m *MemoryStore) Save(_ context.Context, s engine.State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s.Clone()
	m.Saves++
	return nil
}
