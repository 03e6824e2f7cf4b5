package state

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/reconcile/engine"
)

// ConfigMapStore keeps state in ConfigMaps, for reclaim running in a
// cluster. The state is gzipped JSON split into chunks of under 1 MiB: the
// first in the head ConfigMap (Name), the rest in immutable ConfigMaps named
// after the save ("NAME-<save>-<i>"), written before the head and deleted
// after the next save. The head's update, with the resourceVersion Load
// read, commits a save, so two overlapping runs cannot silently overwrite
// each other's clocks, and a save killed half-way leaves the previous one
// whole. A delete batch's changes go to a small journal ConfigMap
// ("NAME-journal"): a batch costs what it changed, not the state's size.
type ConfigMapStore struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string

	mu        sync.Mutex // the journal ConfigMap: Note, and the lock's renewal
	rv        string     // the head's, as last read or written
	journalRV string
	journal   string      // the journal last read or written
	lock      *lockRecord // held by this run (Lock)
	saveID    string
	chunks    []string // the extra chunks of the state last read or written
	noted     noted    // what the journal holds for saveID
	enc       journalEncoder
}

const (
	stateKey     = "state.json" // before chunks: one plain JSON value
	chunkKey     = "state.json.gz"
	journalKey   = "journal.json"
	saveLabel    = "reclaim.dev/state-of"
	formatChunks = "gzip-chunks/v1"
	// chunkSize leaves room in a ConfigMap (1 MiB) for its metadata.
	chunkSize = 1<<20 - 64<<10
)

// maxChunks bounds the state (about 15 MiB gzipped, some 1,000,000 clocks):
// more is a fleet the store should not hold in etcd. (A variable for tests.)
var maxChunks = 16

func (c *ConfigMapStore) String() string { return "configmap " + c.Namespace + "/" + c.Name }

func (c *ConfigMapStore) cms() interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
	Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
	Update(context.Context, *corev1.ConfigMap, metav1.UpdateOptions) (*corev1.ConfigMap, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
} {
	return c.Client.CoreV1().ConfigMaps(c.Namespace)
}

func (c *ConfigMapStore) where() string { return "configmap " + c.Namespace + "/" + c.Name }

func (c *ConfigMapStore) Load(ctx context.Context) (engine.State, error) {
	head, err := c.cms().Get(ctx, c.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.rv, c.saveID, c.chunks, c.noted = "", "", nil, noted{}
		_, err := c.readJournal(ctx)
		return engine.NewState(), err
	}
	if err != nil {
		return engine.State{}, fmt.Errorf("read state %s: %w", c.where(), err)
	}
	c.rv = head.ResourceVersion
	var s engine.State
	if head.Data["format"] != formatChunks {
		s, err = decodeState([]byte(head.Data[stateKey]), c.where())
	} else {
		s, err = c.loadChunks(ctx, head)
	}
	if err != nil {
		return s, err
	}
	c.saveID = s.SaveID
	if _, err := c.readJournal(ctx); err != nil {
		return engine.State{}, err
	}
	s, c.noted, err = journaled(s, []byte(c.journal), "configmap "+c.Namespace+"/"+c.Name+"-journal")
	return s, err
}

// readJournal reads the journal ConfigMap (nil data when there is none) and
// remembers its resourceVersion and journal.
func (c *ConfigMapStore) readJournal(ctx context.Context) (map[string]string, error) {
	j, err := c.cms().Get(ctx, c.Name+"-journal", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.journalRV, c.journal = "", ""
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read state journal %s-journal: %w", c.Name, err)
	}
	c.journalRV, c.journal = j.ResourceVersion, j.Data[journalKey]
	return j.Data, nil
}

func (c *ConfigMapStore) loadChunks(ctx context.Context, head *corev1.ConfigMap) (engine.State, error) {
	var names []string
	if n := head.Data["chunks"]; n != "" {
		names = strings.Split(n, ",")
	}
	var buf bytes.Buffer
	buf.Write(head.BinaryData[chunkKey])
	for _, name := range names {
		cm, err := c.cms().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return engine.State{}, fmt.Errorf("read state %s: chunk %s: %w (a chunk deleted by hand loses the state: delete %s too, and every grace period restarts)", c.where(), name, err, c.Name)
		}
		buf.Write(cm.BinaryData[chunkKey])
	}
	sum := sha256.Sum256(buf.Bytes())
	if hex.EncodeToString(sum[:]) != head.Data["sha256"] {
		return engine.State{}, fmt.Errorf("read state %s: its chunks do not match the head's checksum (edited by hand?): delete %s and its chunks (label %s=%s); every grace period then restarts", c.where(), c.Name, saveLabel, c.Name)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		return engine.State{}, fmt.Errorf("read state %s: %w", c.where(), err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return engine.State{}, fmt.Errorf("read state %s: %w", c.where(), err)
	}
	c.chunks = names
	return decodeState(b, c.where())
}

func (c *ConfigMapStore) Save(ctx context.Context, s engine.State) error {
	s.SaveID = newSaveID()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := s.WriteJSON(zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	data := buf.Bytes()
	if n := (len(data) + chunkSize - 1) / chunkSize; n > maxChunks {
		return fmt.Errorf("save state %s: the state is %d bytes gzipped (%s), more than the %d ConfigMaps of %d KiB the store writes — use state.file on a PersistentVolume, or shorten the grace periods or raise the caps so that fewer candidates wait",
			c.where(), len(data), census(s), maxChunks, chunkSize>>10)
	}
	sum := sha256.Sum256(data)
	labels := map[string]string{"app.kubernetes.io/name": "reclaim", "app.kubernetes.io/component": "state", saveLabel: c.Name}
	yes := true
	var names []string
	undo := func() {
		for _, n := range names {
			_ = c.cms().Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
	for i := 1; i*chunkSize < len(data); i++ {
		name := fmt.Sprintf("%s-%s-%d", c.Name, s.SaveID, i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: labels},
			Immutable: &yes, BinaryData: map[string][]byte{chunkKey: data[i*chunkSize : min(len(data), (i+1)*chunkSize)]}}
		if _, err := c.cms().Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			undo()
			return fmt.Errorf("save state %s: chunk %s: %w", c.where(), name, err)
		}
		names = append(names, name)
	}
	head := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, ResourceVersion: c.rv, Labels: labels},
		Data: map[string]string{"format": formatChunks, "chunks": strings.Join(names, ","), "sha256": hex.EncodeToString(sum[:]),
			"saveID": s.SaveID, "clocks": strconv.Itoa(s.Clocks())},
		BinaryData: map[string][]byte{chunkKey: data[:min(len(data), chunkSize)]},
	}
	out, err := c.put(ctx, head)
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		undo()
		return fmt.Errorf("save state %s: another reclaim run changed it meanwhile (%v); this run's clocks are dropped, the next run starts from the other's", c.where(), err)
	}
	if err != nil {
		undo()
		return fmt.Errorf("save state %s: %w", c.where(), err)
	}
	// Committed: the previous save's chunks are garbage.
	for _, n := range c.chunks {
		if err := c.cms().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("save state %s: saved, but the previous chunk %s could not be deleted: %w", c.where(), n, err)
		}
	}
	c.rv, c.saveID, c.chunks, c.noted = out.ResourceVersion, s.SaveID, names, notedOf(s)
	return nil
}

// put creates cm, or updates it at the resourceVersion it carries: of two
// runs that read the same version, one fails with a conflict.
func (c *ConfigMapStore) put(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	if cm.ResourceVersion == "" {
		return c.cms().Create(ctx, cm, metav1.CreateOptions{})
	}
	return c.cms().Update(ctx, cm, metav1.UpdateOptions{})
}

// Note records a batch's change for the state last loaded or saved (and
// renews the lock this run holds): the journal, one value, written whole
// with the change applied, as a ConfigMap is written whole anyway.
func (c *ConfigMapStore) Note(ctx context.Context, j engine.Journal) error {
	if c.saveID == "" {
		return fmt.Errorf("save state journal %s-journal: the state was not saved by this run: save it first", c.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noted.apply(j)
	var b string
	if err := c.enc.write(c.saveID, c.noted.pending, c.noted.dropped, func(jb []byte) error { b = string(jb); return nil }); err != nil {
		return err
	}
	if c.lock != nil {
		c.lock.Until = time.Now().Add(lockTTL)
	}
	if err := c.writeJournal(ctx, b); err != nil {
		return fmt.Errorf("save state journal %w", err)
	}
	return nil
}

// census says what the state holds, per kind of clock, largest first.
func census(s engine.State) string {
	n := map[string]int{}
	for id := range s.Resources {
		n[clockKind(id)]++
	}
	for g, c := range s.Digests.Counts() {
		n[clockKind(g)] += c
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return n[keys[i]] > n[keys[j]] || n[keys[i]] == n[keys[j]] && keys[i] < keys[j] })
	parts := []string{fmt.Sprintf("%d clocks", s.Clocks())}
	for i, k := range keys {
		if i == 4 {
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}

// clockKind names what a clock's id is of, for a person.
func clockKind(id string) string {
	switch {
	case strings.HasPrefix(id, "ecr:"):
		return "ECR images"
	case strings.HasPrefix(id, "ec2:"):
		return "EC2 interfaces"
	case strings.HasPrefix(id, "projects/"):
		return "GCE disks"
	case strings.HasPrefix(id, "clusters/"):
		if parts := strings.Split(id, "/"); len(parts) >= 6 {
			return "Kubernetes " + parts[4]
		}
	}
	return "other"
}
