package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// alive fails every call of a killed process.
func (f *fleet) alive(ctx context.Context) error {
	if f.killed {
		return errKilled
	}
	return ctx.Err()
}

// begin starts a mutating call: none may happen in a dry run.
func (f *fleet) begin(ctx context.Context, what string) error {
	if err := f.alive(ctx); err != nil {
		return err
	}
	if !f.apply {
		f.violate("dry run made a mutating call: %s", what)
	}
	f.calls++
	f.stats.Calls++
	return nil
}

// end kills the process after the k-th mutating call, if this run is to die.
func (f *fleet) end() {
	if f.killAt > 0 && f.calls == f.killAt && !f.killed {
		f.killed = true
		f.cancel()
		f.stats.Faults["run killed mid-apply"]++
	}
}

func (f *fleet) failCall() bool {
	if f.rf.failP > 0 && f.chance(f.rf.failP) {
		f.stats.Faults["delete call failed"]++
		return true
	}
	return false
}

func (f *fleet) loseResponse() bool {
	if f.rf.loseP > 0 && f.chance(f.rf.loseP) {
		f.stats.Faults["delete response lost"]++
		return true
	}
	return false
}

// deleted records that reclaim deleted an object under a decision id.
func (f *fleet) deleted(kind, id string) {
	f.byReclaim[id]++
	f.stats.Deleted[kind]++
}

// grace checks the truth's clocks of an object at its delete.
func (f *fleet) grace(what string, c clocks, grace interface{ Hours() float64 }) {
	g := grace.Hours()
	switch {
	case c.lenient.IsZero():
		f.violate("deleted %s on first sight: never observed unreferenced", what)
	case f.now.Sub(c.lenient).Hours() < g:
		f.violate("deleted %s before its grace: unreferenced since %s, grace %.0fh", what, c.lenient.Format("Jan 2 15:04"), g)
	case c.strict.IsZero() || f.now.Sub(c.strict).Hours() < g:
		f.stats.Blind++
	}
}

// gceAPI is gcedisk.API over the truth.
type gceAPI struct{ f *fleet }

func (g gceAPI) GetDisk(ctx context.Context, key inventory.DiskKey) (gce.Disk, error) {
	if err := g.f.alive(ctx); err != nil {
		return gce.Disk{}, err
	}
	d := g.f.w.diskAt(key)
	if d == nil {
		return gce.Disk{}, fmt.Errorf("get %s: %w", key, outcome.ErrNotFound)
	}
	return g.f.inventoryDisk(d), nil
}

func (g gceAPI) StartSnapshot(ctx context.Context, key inventory.DiskKey, name string, _ map[string]string) error {
	if err := g.f.begin(ctx, "snapshot of "+key.String()); err != nil {
		return err
	}
	defer g.f.end()
	if g.f.failCall() {
		return errors.New("googleapi: Error 503: backendError")
	}
	if g.f.snaps == nil {
		g.f.snaps = map[string]gce.Snapshot{}
	}
	if _, ok := g.f.snaps[key.Project+"/"+name]; !ok {
		g.f.snaps[key.Project+"/"+name] = gce.Snapshot{Name: name, Status: "READY", Created: g.f.now, SourceDisk: key.String()}
	}
	return nil
}

func (g gceAPI) GetSnapshot(ctx context.Context, project, name string) (gce.Snapshot, error) {
	if err := g.f.alive(ctx); err != nil {
		return gce.Snapshot{}, err
	}
	s, ok := g.f.snaps[project+"/"+name]
	if !ok {
		return s, fmt.Errorf("snapshots.get %s/%s: %w", project, name, outcome.ErrNotFound)
	}
	return s, nil
}

func (g gceAPI) DeleteDisk(ctx context.Context, key inventory.DiskKey) error {
	f := g.f
	if err := f.begin(ctx, "delete "+key.String()); err != nil {
		return err
	}
	defer f.end()
	d := f.w.diskAt(key)
	if d == nil {
		return fmt.Errorf("delete %s: %w", key, outcome.ErrNotFound)
	}
	f.attempts[gcedisk.Name]++
	if f.failCall() {
		return errors.New("googleapi: Error 503: backendError")
	}
	f.checkDisk(d)
	f.w.removeDisk(d)
	f.goneDisks = append(f.goneDisks, key)
	f.deleted(gcedisk.Name, key.String())
	if f.loseResponse() {
		return errors.New("operation wait: context deadline exceeded")
	}
	return nil
}

// checkDisk checks a disk's delete against the truth.
func (f *fleet) checkDisk(d *disk) {
	what := "disk " + d.key.String() + " (id " + d.id + ")"
	pol := f.diskPol
	if len(d.users) > 0 {
		f.violate("deleted attached %s (users %v)", what, d.users)
	}
	for _, v := range f.w.pvRefs(d.key) {
		if v.late {
			f.stats.Races["PV made after the snapshot"]++
			continue
		}
		f.violate("deleted %s that PV %s references", what, v.name)
	}
	if _, ok := d.labels[protectLabel]; ok {
		f.violate("deleted protected %s", what)
	}
	if _, ok := d.labels[ownerLabel]; !ok {
		f.violate("deleted %s without the ownership label", what)
	}
	if why := f.diskEvidence(d); why != "" {
		f.violate("deleted %s while %s", what, why)
	}
	for _, c := range f.w.unseen {
		if c.outOfScope() && slices.ContainsFunc(c.pvs, func(v *pv) bool { return v.disk == d.key }) {
			f.stats.Declared["disk a cluster declared out of scope binds"]++
		}
	}
	if f.w.twinIn(inventory.GKE, d.key.Project) {
		f.stats.Covered["disk deleted in a same-name cluster's project"]++
	}
	if f.now.Sub(d.created) < pol.MinAge.Std() {
		f.violate("deleted %s younger than min age", what)
	}
	if !d.lastDetach.IsZero() && f.now.Sub(d.lastDetach) < pol.MinDetached.Std() {
		f.violate("deleted %s detached %s ago", what, f.now.Sub(d.lastDetach))
	}
	f.grace(what, d.clocks, pol.Grace.Std())
}

// ecrAPI is ecrimage.API over the truth.
type ecrAPI struct{ f *fleet }

func (e ecrAPI) DescribeImages(ctx context.Context, key inventory.RepoKey, digests []string) ([]inventory.Image, error) {
	if err := e.f.alive(ctx); err != nil {
		return nil, err
	}
	r := e.f.w.repoOf(key)
	if r == nil {
		return nil, fmt.Errorf("repository %s: %w", key, outcome.ErrNotFound)
	}
	var out []inventory.Image
	for _, d := range digests {
		if img := r.image(d); img != nil {
			out = append(out, inventoryImage(img))
		}
	}
	return out, nil
}

// RepoTags: the simulated repositories carry no resource tags.
func (e ecrAPI) RepoTags(ctx context.Context, key inventory.RepoKey) (map[string]string, error) {
	if err := e.f.alive(ctx); err != nil {
		return nil, err
	}
	if e.f.w.repoOf(key) == nil {
		return nil, fmt.Errorf("repository %s: %w", key, outcome.ErrNotFound)
	}
	return map[string]string{}, nil
}

func (e ecrAPI) DeleteImages(ctx context.Context, key inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error) {
	f := e.f
	if err := f.begin(ctx, fmt.Sprintf("delete %d images of %s", len(digests), key)); err != nil {
		return nil, err
	}
	defer f.end()
	if len(digests) > ecrimage.MaxBatch {
		f.violate("BatchDeleteImage with %d imageIds", len(digests))
	}
	r := f.w.repoOf(key)
	if r == nil {
		return nil, fmt.Errorf("repository %s: %w", key, outcome.ErrNotFound)
	}
	f.attempts[ecrimage.Name] += len(digests)
	if f.failCall() {
		return nil, errors.New("ThrottlingException: Rate exceeded")
	}
	var fails []inventory.ImageFailure
	var gone []*image
	for _, dg := range digests {
		img := r.image(dg)
		if img == nil {
			fails = append(fails, inventory.ImageFailure{Digest: dg, Code: inventory.ImageNotFound, Reason: "Requested image not found"})
			continue
		}
		f.checkImage(r, img)
		gone = append(gone, img)
	}
	for _, img := range gone { // after every check: a batch is one call
		r.images = slices.DeleteFunc(r.images, func(x *image) bool { return x == img })
		f.deleted(ecrimage.Name, ecrimage.ID(key, img.digest))
	}
	if f.loseResponse() {
		return nil, errors.New("operation error ECR: BatchDeleteImage: read: connection reset by peer")
	}
	return fails, nil
}

func (f *fleet) checkImage(r *repo, img *image) {
	what := "image " + ecrimage.ID(r.key, img.digest)
	if u := f.w.imageUsers(r, img, false); u != "" {
		f.violate("deleted %s referenced by %s", what, u)
	} else if f.w.imageUsers(r, img, true) != "" {
		f.stats.Declared["image only a declared puller or out-of-scope cluster runs"]++
	}
	if len(f.w.pullersOf(r)) > 0 {
		f.stats.Covered["image deleted that foreign principals may pull"]++
	}
	if len(f.w.enabled[r.key.Account]) > 1 {
		f.stats.Covered["image deleted of a registry account running in two regions"]++
	}
	if ps := r.parents(img.digest); len(ps) > 0 {
		f.violate("deleted %s while index %s lists it", what, ps[0].digest)
	}
	for _, t := range img.tags {
		for _, re := range f.imgPol.Repos[0].KeepTags {
			if re.MatchString(t) {
				f.violate("deleted %s with protected tag %s", what, t)
			}
		}
	}
	if why := f.imageEvidence(r); why != "" {
		f.violate("deleted %s while %s", what, why)
	}
	if f.now.Sub(img.pushed) < f.imgPol.MinAge.Std() {
		f.violate("deleted %s younger than min age", what)
	}
	f.grace(what, img.clocks, f.imgPol.Grace.Std())
}

// clientset is a client-go fake whose PVCs are the truth's: reads and
// deletes go to the world, with the apiserver's UID precondition and the
// pvc-protection finalizer.
func (f *fleet) clientset(c *cluster) *k8sfake.Clientset {
	cs := k8sfake.NewClientset()
	gr := corev1.Resource("persistentvolumeclaims")
	cs.PrependReactor("get", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if f.killed {
			return true, nil, errKilled
		}
		name := a.(k8stesting.GetAction).GetName()
		p := c.pvcNamed(name)
		if p == nil || a.GetNamespace() != argoNS {
			return true, nil, apierrors.NewNotFound(gr, name)
		}
		obj := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: p.name, UID: types.UID(p.uid)}}
		if p.protected {
			obj.Labels = map[string]string{protectLabel: "true"}
		}
		if p.terminating {
			obj.DeletionTimestamp = &metav1.Time{Time: f.now}
		}
		return true, obj, nil
	})
	cs.PrependReactor("delete", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		da := a.(k8stesting.DeleteAction)
		name := da.GetName()
		if err := f.begin(context.Background(), "delete PVC "+c.name+"/"+name); err != nil {
			return true, nil, err
		}
		defer f.end()
		p := c.pvcNamed(name)
		if p == nil || a.GetNamespace() != argoNS {
			return true, nil, apierrors.NewNotFound(gr, name)
		}
		if pre := da.GetDeleteOptions().Preconditions; pre != nil && pre.UID != nil && string(*pre.UID) != p.uid {
			return true, nil, apierrors.NewConflict(gr, name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, p.uid))
		}
		f.attempts[k8spvc.Name]++
		if f.failCall() {
			return true, nil, apierrors.NewServiceUnavailable("etcdserver: request timed out")
		}
		f.checkPVC(c, p)
		if p.terminating {
			return true, nil, nil
		}
		if c.runningPod(p.name) != nil {
			p.terminating = true // pvc-protection: gone when the pod is
		} else {
			f.removePVC(c, p)
			f.byOthers[k8spvc.ID(c.name, argoNS, p.name)]--
		}
		f.deleted(k8spvc.Name, k8spvc.ID(c.name, argoNS, p.name))
		if f.loseResponse() {
			return true, nil, apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
		}
		return true, nil, nil
	})
	f.workloadReactors(cs, c)
	return cs
}

func (f *fleet) checkPVC(c *cluster, p *pvc) {
	what := fmt.Sprintf("PVC %s/%s/%s (uid %s)", c.name, argoNS, p.name, p.uid)
	if pd := c.runningPod(p.name); pd != nil {
		if pd.late {
			f.stats.Races["pod started after the snapshot (pvc-protection holds the PVC)"]++
		} else {
			f.violate("deleted %s mounted by running pod %s", what, pd.name)
		}
	}
	if !p.wf.Done() {
		f.violate("deleted %s of workflow %s that is %s", what, p.wf.Name, p.wf.Phase)
	}
	if p.protected {
		f.violate("deleted protected %s", what)
	}
	if p.terminating {
		f.violate("deleted %s again while Terminating", what)
	}
	if !f.pvcPol.Delete {
		f.violate("deleted %s with k8sPvcs.delete off", what)
	}
	if why := f.rf.clusters[c.name]; why != "" {
		f.violate("deleted %s while its cluster was %s", what, why)
	}
	f.grace(what, p.clocks, f.pvcPol.Grace.Std())
}
