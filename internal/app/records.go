package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Records is where the clusters' records are (fleet.snapshots): the
// bucket client, or a harness's.
type Records interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, body []byte) error
}

// OpenRecords opens the fleet.snapshots bucket.
func OpenRecords(ctx context.Context, s *config.Snapshots, log *zap.Logger) (Records, error) {
	c, err := bucket.New(ctx, bucket.Options{Bucket: s.Bucket, PathStyle: s.Endpoint != "", Service: awsclient.Service{
		Account: s.Account, Region: s.Region, Profile: s.Profile, RoleARN: s.RoleARN, ExternalID: s.ExternalID,
		Endpoint: s.Endpoint, UserAgent: "reclaim/" + Version, Logger: awsclient.ZapLogger(log)}})
	if err != nil {
		return nil, fmt.Errorf("fleet.snapshots: %w", err)
	}
	return c, nil
}

// recordReader reads clusters from their agents' records instead of their
// API servers. What it cannot accept is an incomplete cluster, with why:
// it holds whatever the cluster could use.
type recordReader struct {
	cfg   *config.Snapshots
	store Records
	taps  map[string]published.Decoder
	now   func() time.Time
	// prev is what the state remembered of each record; seen what this
	// pass accepted (or kept remembering), for the state saved after it.
	prev map[string]engine.RecordSeen
	mu   sync.Mutex
	seen map[string]engine.RecordSeen
}

// begin starts a pass with what the state remembers.
func (rr *recordReader) begin(prev map[string]engine.RecordSeen) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.prev, rr.seen = prev, map[string]engine.RecordSeen{}
}

// remembered is what the pass leaves for the next: this pass's records,
// and what was remembered of those it did not look at.
func (rr *recordReader) remembered() map[string]engine.RecordSeen {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	out := make(map[string]engine.RecordSeen, len(rr.prev)+len(rr.seen))
	for k, v := range rr.prev {
		out[k] = v
	}
	for k, v := range rr.seen {
		out[k] = v
	}
	return out
}

// readAtOnce is how many records are read at once: enough Gets in flight
// that a fleet's read is bound by decoding its records, not by S3's
// latency (a record in flight is its compressed bytes, some KiB).
const readAtOnce = 64

// read reads every target's record, readAtOnce at a time; one result per
// target.
func (rr *recordReader) read(ctx context.Context, targets []kube.Target) []inventory.ClusterRefs {
	out := make([]inventory.ClusterRefs, len(targets))
	_ = awsclient.Each(len(targets), readAtOnce, func(i int) error {
		out[i] = rr.one(ctx, targets[i])
		return nil
	})
	return out
}

// one reads a target's record and says whether it can stand for the
// cluster: the deleter's limits (projects, accounts, subnets) are the
// target's, never the record's.
func (rr *recordReader) one(ctx context.Context, t kube.Target) inventory.ClusterRefs {
	start := rr.now()
	key := published.Key(rr.cfg.Prefix, t.Place, t.CloudName)
	held := func(problems ...string) inventory.ClusterRefs {
		return inventory.ClusterRefs{Name: t.Name, Projects: t.Projects, Accounts: t.Accounts, Subnets: t.Subnets,
			Problems: problems, Duration: rr.now().Sub(start)}
	}
	where := fmt.Sprintf("s3://%s/%s", rr.cfg.Bucket, key)
	body, err := rr.store.Get(ctx, key)
	switch {
	case errors.Is(err, inventory.ErrNotFound):
		return held(fmt.Sprintf("no record at %s: is reclaim agent running in the cluster, as %s in %s?", where, t.CloudName, t.Place))
	case errors.Is(err, bucket.ErrDenied):
		return held(fmt.Sprintf("reading %s was denied: grant reclaim s3:GetObject on the prefix (deploy/aws)", where))
	case err != nil:
		return held(fmt.Sprintf("reading %s: %v", where, err))
	}
	rec, err := published.Decode(bytes.NewReader(body), rr.taps)
	if err != nil {
		return held(fmt.Sprintf("the record at %s cannot be read: %v", where, err))
	}
	rr.mu.Lock()
	last := rr.prev[key]
	rr.mu.Unlock()
	pin := rr.cfg.KubeSystemUIDs[t.Name]
	if pin == "" {
		pin = last.KubeSystemUID
	}
	now := rr.now()
	problems := rec.Check(published.Expect{Name: t.CloudName, Place: t.Place, CA: published.CAHash(t.CAData),
		KubeSystemUID: pin, MaxAge: rr.cfg.MaxAge.Std(), Now: now})
	for i, p := range problems {
		problems[i] = where + ": " + p
	}
	if pin != "" && rec.Cluster.KubeSystemUID != pin {
		problems = append(problems, fmt.Sprintf("if the cluster was recreated, pin its new UID: fleet.snapshots.kubeSystemUIDs.%s: %s", t.Name, rec.Cluster.KubeSystemUID))
	}
	next := engine.RecordSeen{KubeSystemUID: rec.Cluster.KubeSystemUID, Items: rec.Items()}
	if len(problems) == 0 {
		if why, since := rr.drop(last, next.Items, now); why != "" {
			problems = append(problems, where+": "+why)
			next = last
			next.DropSince = since
		}
	} else {
		next = last // a record not accepted changes nothing remembered
	}
	if next != (engine.RecordSeen{}) {
		rr.mu.Lock()
		rr.seen[key] = next
		rr.mu.Unlock()
	}
	c := rec.Refs
	c.Name, c.Projects, c.Accounts, c.Subnets = t.Name, t.Projects, t.Accounts, t.Subnets
	for i := range c.PVs {
		c.PVs[i].Cluster = t.Name
	}
	for i := range c.PVCs {
		c.PVCs[i].Cluster = t.Name
	}
	if len(problems) > 0 {
		c.Complete = false
		c.Problems = append(problems, c.Problems...)
	}
	c.Duration = rr.now().Sub(start)
	return c
}

// drop says why a record of items things in use cannot be believed after
// one of last.Items: it lists more than maxDrop less, and has not done so
// for dropSettle yet. A cluster that suddenly "uses nothing" is more often
// an agent reading the wrong cluster, or a partial read, than the truth.
func (rr *recordReader) drop(last engine.RecordSeen, items int, now time.Time) (why string, since time.Time) {
	const floor = 10 // below this, a cluster's use swings by whole fractions
	if last.Items < floor || float64(items) >= float64(last.Items)*(1-rr.cfg.MaxDrop.Fraction()) {
		return "", time.Time{}
	}
	since = last.DropSince
	if since.IsZero() {
		since = now
	}
	settle := rr.cfg.DropSettle.Std()
	if now.Sub(since) >= settle {
		return "", time.Time{}
	}
	return fmt.Sprintf("the record lists %d things in use, the last accepted %d: a drop of more than fleet.snapshots.maxDrop %s holds what the cluster could use until %s, unless its use comes back",
		items, last.Items, rr.cfg.MaxDrop, since.Add(settle).UTC().Format(time.RFC3339)), since
}

// publisher writes an agent's cluster record.
type publisher struct {
	cfg    *config.Snapshots
	store  Records
	target kube.Target
	client func(cluster string) (kubernetes.Interface, error)
	log    *zap.Logger
}

// publish writes what the pass read of the agent's cluster as its record.
// The cluster's identity is read here: its CA from the client's config,
// its kube-system namespace's UID from the API server.
func (p *publisher) publish(ctx context.Context, snap *inventory.Snapshot) error {
	if len(snap.Clusters) != 1 {
		return fmt.Errorf("an agent reads one cluster, this pass read %d", len(snap.Clusters))
	}
	t := p.target
	rc, err := kube.RESTConfig(t)
	if err != nil {
		return err
	}
	ca := rc.CAData
	if len(ca) == 0 && rc.CAFile != "" {
		if ca, err = os.ReadFile(rc.CAFile); err != nil {
			return fmt.Errorf("the cluster's CA: %w", err)
		}
	}
	cs, err := p.client(t.Name)
	if err != nil {
		return err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the kube-system namespace (its UID names the cluster): %w", err)
	}
	rec := published.Record{TakenAt: snap.TakenAt, Agent: Version, Refs: snap.Clusters[0],
		Cluster: published.Identity{Name: t.CloudName, Platform: t.Place.Platform, Account: t.Place.Account, Project: t.Place.Project,
			Location: t.Place.Location, CA: published.CAHash(ca), KubeSystemUID: string(ns.UID)}}
	var b bytes.Buffer
	if err := published.Encode(&b, rec); err != nil {
		return err
	}
	key := published.Key(p.cfg.Prefix, t.Place, t.CloudName)
	if err := p.store.Put(ctx, key, b.Bytes()); err != nil {
		return err
	}
	p.log.Info("published the cluster's record", zap.String("key", key), zap.Int("bytes", b.Len()), zap.Int("items", rec.Items()),
		zap.Bool("complete", rec.Refs.Complete))
	return nil
}

// decoders are the taps' decoders by name: the taps whose data a deleter
// reads from records.
func decoders(taps []kube.Tap) map[string]published.Decoder {
	out := map[string]published.Decoder{}
	for _, t := range taps {
		if t.Decode != nil {
			out[t.Name] = t.Decode
		}
	}
	return out
}

// CheckRole is what reclaim run (agent false) or reclaim agent refuses of
// a config before reading anything; config check asks it too, so that it
// refuses what the run would.
func CheckRole(cfg *config.Config, agent bool) error {
	if cfg.Fleet.Snapshots == nil {
		return nil
	}
	return checkRole(cfg, agent)
}

// checkRole checks a config with fleet.snapshots for its role: an agent
// reads exactly its own cluster; a deleter dials none.
func checkRole(cfg *config.Config, agent bool) error {
	if agent {
		if len(cfg.Clusters) != 1 {
			return fmt.Errorf("clusters: reclaim agent reads exactly its own cluster, the config lists %d — give it one entry (inCluster: true in the cluster)", len(cfg.Clusters))
		}
		return nil
	}
	for i, cl := range cfg.Clusters {
		if cl.Kubeconfig != "" || cl.Context != "" || cl.InCluster {
			return fmt.Errorf("clusters[%d]: with fleet.snapshots, reclaim run reads each cluster from its agent's record and dials none: remove kubeconfig, context and inCluster (they belong in the agent's config)", i)
		}
	}
	return nil
}
