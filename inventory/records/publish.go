package records

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
)

// Publisher writes an agent's cluster record: its Target's, to Store
// under Config's prefix, read through Client; Agent is the agent's
// version, which the record names.
type Publisher struct {
	Config *config.Records
	Store  Store
	Target kube.Target
	Client func(cluster string) (kubernetes.Interface, error)
	Log    *zap.Logger
	Agent  string
}

// Publish writes what the pass read of the agent's cluster as its record.
// The cluster's identity is read here: its CA from the client's config,
// its kube-system namespace's UID from the API server.
func (p *Publisher) Publish(ctx context.Context, snap *inventory.View) error {
	if len(snap.Clusters) != 1 {
		return fmt.Errorf("an agent reads one cluster, this pass read %d", len(snap.Clusters))
	}
	t := p.Target
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
	cs, err := p.Client(t.Name)
	if err != nil {
		return err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the kube-system namespace (its UID names the cluster): %w", err)
	}
	rec := published.Record{TakenAt: snap.TakenAt, Agent: p.Agent, Refs: snap.Clusters[0],
		Cluster: published.Identity{Name: t.CloudName, Platform: t.Place.Platform, Account: t.Place.Account, Project: t.Place.Project,
			Location: t.Place.Location, CA: published.CAHash(ca), KubeSystemUID: string(ns.UID)}}
	var b bytes.Buffer
	if err := published.Encode(&b, rec); err != nil {
		return err
	}
	key := published.Key(p.Config.Prefix, t.Place, t.CloudName)
	if err := p.Store.Put(ctx, key, b.Bytes()); err != nil {
		return err
	}
	p.Log.Info("published the cluster's record", zap.String("key", key), zap.Int("bytes", b.Len()), zap.Int("items", rec.Items()),
		zap.Bool("complete", rec.Refs.Complete))
	return nil
}
