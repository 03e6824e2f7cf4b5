package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// State is what reclaim remembers between runs: when each resource was first
// seen as an orphan, and deletions started but not yet confirmed. It lives in
// reclaim's own store, never as tags on the resource, so dry-run leaves the
// cloud untouched and Terraform sees no drift.
type State struct {
	Version   int                `json:"version"`
	Resources map[string]Entry   `json:"resources"`
	Pending   map[string]Pending `json:"pending,omitempty"`
	// LastSuccess is when a run last finished with every source complete and
	// every delete done; a CronJob's metrics read it from here.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Usage is a short history of each quota's usage ("project/region/metric"),
	// from which the planner projects when it runs out.
	Usage map[string][]Sample `json:"usage,omitempty"`
}

// Sample is one observation of a quota's usage.
type Sample struct {
	T     time.Time `json:"t"`
	Usage float64   `json:"u"`
}

// Entry is one resource's orphan clock.
type Entry struct {
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	// Identity is the object the clock was started for (a PVC's UID): a new
	// object under the same id starts a new clock.
	Identity string `json:"identity,omitempty"`
}

// Pending is a deletion that was started; the next run confirms it so that the
// audit log records every delete exactly once even if a run is killed half-way.
type Pending struct {
	Kind    string    `json:"kind"`
	Started time.Time `json:"started"`
	Reason  string    `json:"reason"`
	SizeGB  int64     `json:"sizeGB"`
}

const stateVersion = 1

func (s State) clone() State {
	out := State{Version: stateVersion, Resources: make(map[string]Entry, len(s.Resources)), Pending: map[string]Pending{}, LastSuccess: s.LastSuccess}
	for k, v := range s.Resources {
		out.Resources[k] = v
	}
	for k, v := range s.Pending {
		out.Pending[k] = v
	}
	out.Usage = make(map[string][]Sample, len(s.Usage))
	for k, v := range s.Usage {
		out.Usage[k] = append([]Sample(nil), v...)
	}
	return out
}

// observeOrphan records that id is an orphan now and returns since when.
func (s *State) observeOrphan(id string, now time.Time) time.Time {
	e, ok := s.Resources[id]
	if !ok || e.FirstSeen.After(now) {
		e.FirstSeen = now
	}
	e.LastSeen = now
	s.Resources[id] = e
	return e.FirstSeen
}

// observeAs is observeOrphan for an object with an identity that changes
// when it is recreated under the same id.
func (s *State) observeAs(id, identity string, now time.Time) time.Time {
	if e, ok := s.Resources[id]; ok && e.Identity != identity {
		delete(s.Resources, id)
	}
	since := s.observeOrphan(id, now)
	e := s.Resources[id]
	e.Identity = identity
	s.Resources[id] = e
	return since
}

// forget resets the clock: the resource is in use (or protected) again.
func (s *State) forget(id string) { delete(s.Resources, id) }

// Store loads and saves State.
type Store interface {
	Load(ctx context.Context) (State, error)
	Save(ctx context.Context, s State) error
	String() string
}

func emptyState() State {
	return State{Version: stateVersion, Resources: map[string]Entry{}, Pending: map[string]Pending{}}
}

func decodeState(b []byte, where string) (State, error) {
	s := emptyState()
	if len(b) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("state %s is not valid JSON (%v): fix or remove it; removing it restarts every grace period", where, err)
	}
	if s.Version > stateVersion {
		return State{}, fmt.Errorf("state %s has version %d, newer than this reclaim understands (%d): upgrade reclaim", where, s.Version, stateVersion)
	}
	if s.Resources == nil {
		s.Resources = map[string]Entry{}
	}
	if s.Pending == nil {
		s.Pending = map[string]Pending{}
	}
	return s, nil
}

// FileStore keeps state in a local JSON file, written atomically.
type FileStore struct{ Path string }

func (f FileStore) String() string { return "file " + f.Path }

func (f FileStore) Load(context.Context) (State, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return emptyState(), nil
	}
	if err != nil {
		return State{}, fmt.Errorf("read state: %w", err)
	}
	return decodeState(b, f.Path)
}

func (f FileStore) Save(_ context.Context, s State) error {
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

func (c *ConfigMapStore) Load(ctx context.Context) (State, error) {
	cm, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.rv = ""
		return emptyState(), nil
	}
	if err != nil {
		return State{}, fmt.Errorf("read state configmap %s/%s: %w", c.Namespace, c.Name, err)
	}
	c.rv = cm.ResourceVersion
	return decodeState([]byte(cm.Data[stateKey]), "configmap "+c.Namespace+"/"+c.Name)
}

// maxConfigMapState is what a ConfigMap holds (1 MiB), less room for metadata.
const maxConfigMapState = 1<<20 - 16<<10

func (c *ConfigMapStore) Save(ctx context.Context, s State) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if len(b) > maxConfigMapState {
		// Thousands of image candidates under their grace period can outgrow it.
		return fmt.Errorf("save state configmap %s/%s: the state is %d bytes (%d clocks), more than a ConfigMap holds (1 MiB) — use state.file on a PersistentVolume, or shorten ecr.grace",
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
	state State
	Saves int
}

// NewMemoryStore starts from s.
func NewMemoryStore(s State) *MemoryStore {
	if s.Resources == nil {
		s = emptyState()
	}
	return &MemoryStore{state: s.clone()}
}

func (m *MemoryStore) String() string { return "memory" }

func (m *MemoryStore) Load(context.Context) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.clone(), nil
}

func (m *MemoryStore) Save(_ context.Context, s State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s.clone()
	m.Saves++
	return nil
}

// NewState returns an empty state to seed (demo, tests).
func NewState() State { return emptyState() }

// Seen records that id has been an orphan since t.
func (s State) Seen(id string, t time.Time) { s.Resources[id] = Entry{FirstSeen: t, LastSeen: t} }
