// Package k8spvc is the k8s-pvc kind: PVCs of finished Argo Workflows
// that no running pod mounts — the leak behind the SSD_TOTAL_GB story
// (volumeClaimGC defaults to OnWorkflowSuccess, so failed workflows keep
// theirs). Deleting them is off by default; the PV's reclaim policy then
// deletes the disk.
package k8spvc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind as reports and the audit log spell it (schema v1).
const Name = "k8s-pvc"

// Policy is the operator's policy for these PVCs (the k8sPvcs section).
type Policy struct {
	// DiskPrice prices a PVC's disk (config.Prices.DiskGBMonth); nil
	// prices nothing.
	DiskPrice    func(typ, region string) (float64, bool)
	Delete       bool // k8sPvcs.delete
	ProtectLabel string
	// Safety is the k8sPvcs section's grace and caps.
	config.Safety
}

// Kind plans and deletes finished-workflow PVCs.
type Kind struct {
	Policy Policy
	// Client returns a cluster's client; nil plans only.
	Client func(cluster string) (kubernetes.Interface, error)

	once sync.Once
	del  *finished.Deleter[*corev1.PersistentVolumeClaim]
}

// Detail is what a PVC decision says beyond the envelope (schema v1 fields).
type Detail struct {
	Cluster  string `json:"cluster,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"` // the namespace
	Region   string `json:"region,omitempty"`
	UID      string `json:"uid,omitempty"`
}

var _ engine.Located = (*Detail)(nil) // routed by notify.routes

// Where is the claim's cluster and namespace.
func (d *Detail) Where() engine.Where { return engine.Where{Cluster: d.Cluster, Namespace: d.Location} }

// ID names a PVC across the fleet.
func ID(cluster, namespace, name string) string {
	return fmt.Sprintf("clusters/%s/namespaces/%s/persistentvolumeclaims/%s", cluster, namespace, name)
}

func parseID(id string) (cluster, namespace, name string, ok bool) {
	p := strings.Split(id, "/")
	if len(p) != 6 || p[0] != "clusters" || p[2] != "namespaces" || p[4] != "persistentvolumeclaims" {
		return "", "", "", false
	}
	return p[1], p[3], p[5], true
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { _, _, _, ok := parseID(id); return ok }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.Policy.Safety, gcepd.GB)
	l.BatchSize, l.OptOutKey = 1, k.Policy.ProtectLabel
	l.Wording = engine.Wording{Section: Key, Noun: "PVCs"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optOut(k.Policy.ProtectLabel) }

// optOut says how a PVC is protected: its label, or its PV's.
func optOut(label string) string {
	if label == "" {
		return ""
	}
	return optout.Rule("label", label, "PVC or its PV")
}

// Propose gives every PVC owned by an Argo Workflow a proposal.
func (k *Kind) Propose(snap *inventory.View, _ time.Time) engine.Proposals {
	out := engine.Proposals{}
	metricOf := map[string]string{} // disk name -> quota metric
	for _, l := range gcepd.ListingOf(snap).Disks {
		for _, d := range l.Disks {
			metricOf[d.Key.Name] = gcepd.QuotaMetricOf(d.Type)
		}
	}
	present := map[string]bool{}
	uids := map[string]string{}
	complete := map[string]bool{}
	for _, c := range snap.Clusters {
		complete[c.Name] = c.Complete
		sources := sourcesOf(c.Name)
		for _, pvc := range c.PVCs {
			id := ID(c.Name, pvc.Namespace, pvc.Name)
			// A Terminating PVC was deleted; Kubernetes finishes the job.
			present[id] = !pvc.Terminating
			uids[id] = pvc.UID
			out.Items = append(out.Items, k.propose(c.Name, pvc, sources, metricOf))
		}
		out.InScope += len(c.PVCs)
	}
	out.Identity = func(id string) string { return uids[id] }
	out.Presence = engine.Listed(func(id string) (string, bool) {
		cluster, _, _, ok := parseID(id)
		return cluster, ok
	}, complete, present)
	return out
}

func (k *Kind) propose(cluster string, pvc inventory.PVCRef, sources []string, metricOf map[string]string) engine.Proposal {
	det := &Detail{Cluster: cluster, Location: pvc.Namespace, UID: pvc.UID}
	p := engine.Proposal{ID: ID(cluster, pvc.Namespace, pvc.Name), Name: pvc.Name,
		Frees: amount.Free(pvc.CapacityGB, gcepd.GB), Detail: det}
	if pvc.Disk != nil {
		det.Project, det.Region = pvc.Disk.Project, pvc.Disk.QuotaRegion()
		p.Frees.Pool = gcepd.Pool(det.Project, det.Region, metricOf[pvc.Disk.Name])
	}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	w := pvc.Workflow
	switch {
	case pvc.Terminating:
		// Deleted already (by reclaim or anyone): deleting it again would
		// change nothing and audit the same delete twice.
		return keep("deleting", "already being deleted (Terminating until no pod uses it)")
	case w == nil || !w.Done():
		if w != nil && w.Phase != "" {
			return keep("workflow-running", fmt.Sprintf("Workflow %s/%s is %s", w.Namespace, w.Name, w.Phase))
		}
		return keep("workflow-running", "its Workflow has not finished")
	}
	if r := running(pvc.Pods); r != nil {
		return keep("mounted", fmt.Sprintf("mounted by pod %s (%s)", r.Namespace+"/"+r.Name, r.Phase))
	}
	if pvc.Protected {
		p.Class, p.Protected = "protected", "protected by label on the PVC or its PV"
		return p
	}
	p.Candidate, p.Identity, p.Sources, p.Class = true, pvc.UID, sources, "finished-workflow"
	p.Reason = fmt.Sprintf("Workflow %s/%s %s at %s and no running pod mounts it", w.Namespace, w.Name, w.Phase, w.Finished.UTC().Format(time.RFC3339))
	if !k.Policy.Delete {
		p.ReportOnly = true
		p.Reason += "; k8sPvcs.delete is off"
	}
	return p
}

func running(pods []inventory.PodRef) *inventory.PodRef {
	for i := range pods {
		if pods[i].Running() {
			return &pods[i]
		}
	}
	return nil
}

// Recheck re-reads each PVC: gone or Terminating is gone; another UID
// (recreated) or the protect label since the plan is a skip. Kubernetes'
// pvc-protection finalizer keeps a PVC a pod still uses until the pod is gone,
// which backs up the plan's "no running pod" evidence.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	return k.deleter().Recheck(ctx, batch)
}

// Delete deletes each PVC only if it is still the same object (a UID
// precondition: a PVC recreated since the re-read is refused, a skip). A
// refusal (forbidden, invalid) fails this PVC only; no answer fails the
// batch, as for every Kubernetes kind.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	return k.deleter().Delete(ctx, batch)
}

// DeletesPerSecond paces the PVC re-reads and deletes per cluster: a run
// deletes at most k8sPvcs.maxDeletesPerRun of them.
const DeletesPerSecond = 5

// deleter is the shared Kubernetes delete path (finished.Deleter), one per
// Kind so that its pacing spans the run's batches.
func (k *Kind) deleter() *finished.Deleter[*corev1.PersistentVolumeClaim] {
	k.once.Do(func() {
		k.del = &finished.Deleter[*corev1.PersistentVolumeClaim]{Client: k.Client, PerSecond: DeletesPerSecond, Parallel: 1,
			Target: func(d *engine.Decision) finished.Target {
				det := detailOf(d)
				return finished.Target{Cluster: det.Cluster, Namespace: det.Location, UID: det.UID}
			},
			API: finished.API[*corev1.PersistentVolumeClaim]{Resource: "pvc",
				In: func(cs kubernetes.Interface, ns string) finished.Objects[*corev1.PersistentVolumeClaim] {
					return cs.CoreV1().PersistentVolumeClaims(ns)
				},
			}}
	})
	return k.del
}

func detailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// pricedAs is the disk type a PVC is priced as: GKE's default StorageClass
// (standard-rwo) provisions pd-balanced, and a PVC does not say its disk's.
const pricedAs = "pd-balanced"

// MonthlyCost implements engine.Pricer: the PVC's capacity at pd-balanced's
// price in its disk's region.
func (k *Kind) MonthlyCost(d *engine.Decision) float64 {
	det, ok := d.Detail.(*Detail)
	if !ok || k.Policy.DiskPrice == nil {
		return 0
	}
	price, _ := k.Policy.DiskPrice(pricedAs, det.Region)
	return float64(d.Frees.Of(gcepd.GB)) * price
}
