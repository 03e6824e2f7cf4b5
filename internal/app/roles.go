package app

import (
	"context"
	"errors"
	"fmt"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
)

// CheckRole is what reclaim run (agent false) or reclaim agent refuses of
// a config before reading anything; config check asks it too, so that it
// refuses what the run would. outside is reclaim agent --outside-cluster.
func CheckRole(cfg *config.Config, agent, outside bool) error {
	if cfg.Fleet.Records == nil {
		return nil
	}
	return checkRole(cfg, agent, outside)
}

// checkRole checks a config with fleet.records for its role: an agent
// reads exactly its own cluster, from inside it unless its command line
// says otherwise (outside); a deleter dials none.
func checkRole(cfg *config.Config, agent, outside bool) error {
	if agent {
		if len(cfg.Clusters) != 1 {
			return fmt.Errorf("clusters: reclaim agent reads exactly its own cluster, the config lists %d — give it one entry (inCluster: true in the cluster)", len(cfg.Clusters))
		}
		if !cfg.Clusters[0].InCluster && !outside {
			return fmt.Errorf("clusters[0]: reclaim agent publishes the cluster it runs in: set inCluster: true and run it in the cluster (a kubeconfig would let a copied agent config publish another cluster's view under this one's name); to read it from outside on purpose, say so on the command line: --outside-cluster")
		}
		return nil
	}
	if _, err := records.BoundsFor(cfg.Fleet.Records, records.MemoryTarget()); err != nil {
		return err
	}
	for i, cl := range cfg.Clusters {
		if cl.Kubeconfig != "" || cl.Context != "" || cl.InCluster {
			return fmt.Errorf("clusters[%d]: with fleet.records, reclaim run reads each cluster from its agent's record and dials none: remove kubeconfig, context and inCluster (they belong in the agent's config)", i)
		}
	}
	return nil
}

// Watch watches the agent's cluster until ctx ends, calling changed on
// each change of what its pass reads (kube.Watch): reclaim daemon --agent
// runs a pass, and publishes, on change. Only an agent's runner watches.
func (r *Runner) Watch(ctx context.Context, changed func()) error {
	if r.pub == nil {
		return errors.New("only an agent (fleet.records, reclaim daemon --agent) watches its cluster")
	}
	rc, err := kube.RESTConfig(r.pub.Target)
	if err != nil {
		return err
	}
	return kube.Watch(ctx, rc, changed)
}
