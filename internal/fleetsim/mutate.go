package fleetsim

import (
	"fmt"
	"slices"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// pick returns a random element of s (s must not be empty).
func pick[T any](f *fleet, s []T) T { return s[f.rng.IntN(len(s))] }

func (f *fleet) chance(p float64) bool { return f.rng.Float64() < p }

// setup makes the fleet's starting world: some of everything, some of it
// already leaked.
func (f *fleet) setup() {
	w := f.w
	w.projects = []string{"proj-a", "proj-b"}[:1+f.rng.IntN(2)]
	w.zones = []string{region + "-b", region + "-c"}[:1+f.rng.IntN(2)]
	w.accounts = []string{"111111111111", "222222222222"}[:1+f.rng.IntN(2)]
	for i := range 2 + f.rng.IntN(4) {
		c := &cluster{name: fmt.Sprintf("c%d", i+1)}
		if len(w.projects) > 1 && f.chance(0.3) {
			c.projects = []string{pick(f, w.projects)}
		}
		if len(w.accounts) > 1 && f.chance(0.3) {
			c.accounts = []string{pick(f, w.accounts)}
		}
		w.clusters = append(w.clusters, c)
	}
	f.setupHomes()
	for i := range 1 + f.rng.IntN(3) {
		r := &repo{key: inventory.RepoKey{Account: pick(f, w.accounts), Region: ecrRegion, Name: fmt.Sprintf("team/app%d", i+1)}}
		w.repos = append(w.repos, r)
		for range 3 + f.rng.IntN(10) {
			f.push(r, f.now.Add(-time.Duration(1+f.rng.IntN(200))*time.Hour))
		}
	}
	if f.chance(0.5) {
		w.manifests = append(w.manifests, &manifest{name: "gitops"})
	}
	for range 3 + f.rng.IntN(6) {
		f.newOrphanDisk(f.now.Add(-time.Duration(f.rng.IntN(72)) * time.Hour))
	}
	for range 2 + f.rng.IntN(5) {
		f.newStaticDisk()
	}
	for range 2 + f.rng.IntN(5) {
		f.newWorkflow(pick(f, w.clusters))
	}
	for range 3 + f.rng.IntN(6) {
		f.newImageRef()
	}
	f.setupNetwork()
	f.setupTwins()
	f.setupPullers()
	f.setupRegions()
	f.setupWorkloads()
}

// mutate changes the world between runs.
func (f *fleet) mutate() {
	w := f.w
	// What was made in the last apply window is visible from now on.
	for _, c := range w.clusters {
		for _, p := range c.pvs {
			p.late = false
		}
		for _, p := range c.pods {
			p.late = false
		}
		for _, r := range c.refs {
			r.late = false
		}
	}
	f.settleKubernetes()
	f.mutateWorkloads()
	f.mutateNetwork()
	f.mutateTwins()
	f.mutatePullers()
	f.mutateRegions()
	for range 2 + f.rng.IntN(6) {
		switch f.rng.IntN(16) {
		case 0, 1:
			f.newOrphanDisk(f.now)
		case 2:
			f.newStaticDisk()
		case 3:
			f.releaseStaticPV()
		case 4:
			f.attachOrDetach()
		case 5:
			f.recreateDisk()
		case 6:
			f.toggleDiskProtection()
		case 7:
			f.newWorkflow(f.diskCluster())
		case 8:
			f.finishWorkflow()
		case 9:
			f.recreatePVC()
		case 10:
			f.debugPod()
		case 11:
			f.push(pick(f, w.repos), f.now)
		case 12:
			f.newImageRef()
		case 13:
			f.dropImageRef()
		case 14:
			f.retag(nil)
		case 15:
			f.togglePVCProtection()
		}
	}
}

func (f *fleet) diskKey(project string) inventory.DiskKey {
	return inventory.DiskKey{Project: project, Zone: pick(f, f.w.zones), Name: fmt.Sprintf("pvc-%04d", f.w.next())}
}

func (f *fleet) newDisk(key inventory.DiskKey, created time.Time) *disk {
	d := &disk{key: key, id: fmt.Sprint(1000000 + f.w.next()), sizeGB: int64(10 * (1 + f.rng.IntN(20))),
		labels: map[string]string{}, created: created}
	if f.chance(0.8) {
		d.labels[ownerLabel] = "true"
	}
	f.w.disks = append(f.w.disks, d)
	return d
}

// newOrphanDisk is the leak: a disk nobody uses, sometimes without the
// ownership label (reported, never deleted) or protected.
func (f *fleet) newOrphanDisk(created time.Time) {
	d := f.newDisk(f.diskKey(pick(f, f.w.projects)), created)
	if f.chance(0.1) {
		d.labels[protectLabel] = "keep"
	}
	if f.chance(0.3) {
		d.lastDetach = f.now.Add(-time.Duration(f.rng.IntN(5)) * time.Hour)
	}
}

// diskCluster picks a cluster that may reference the fleet's disks (not
// an EKS cluster discovery found).
func (f *fleet) diskCluster() *cluster {
	var can []*cluster
	for _, c := range f.w.clusters {
		if slices.ContainsFunc(f.w.projects, c.couldReference) {
			can = append(can, c)
		}
	}
	return pick(f, can)
}

// newStaticDisk is a disk a cluster's PV references, perhaps attached.
func (f *fleet) newStaticDisk() {
	c := f.diskCluster()
	d := f.newDisk(f.diskKey(f.projectFor(c)), f.now.Add(-time.Duration(f.rng.IntN(100))*time.Hour))
	f.labelFor(c, d)
	c.pvs = append(c.pvs, &pv{name: "pv-" + d.key.Name, disk: d.key, retain: true})
	if f.chance(0.5) {
		d.users = []string{f.instance(d.key)}
	}
}

// labelFor labels a disk of a GKE cluster's own project as its PD CSI
// driver does: with its cloud name.
func (f *fleet) labelFor(c *cluster, d *disk) {
	if c.home.platform == inventory.GKE && d.key.Project == c.home.project {
		d.labels[gcedisk.ClusterLabel] = c.cloudName()
	}
}

func (f *fleet) projectFor(c *cluster) string {
	if len(c.projects) > 0 {
		return pick(f, c.projects)
	}
	return pick(f, f.w.projects)
}

func (f *fleet) instance(k inventory.DiskKey) string {
	return fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/zones/%s/instances/node-%d", k.Project, k.Zone, f.rng.IntN(9))
}

// releaseStaticPV deletes a static PV: its disk becomes an orphan.
func (f *fleet) releaseStaticPV() {
	c := pick(f, f.w.clusters)
	i := slices.IndexFunc(c.pvs, func(p *pv) bool { return p.claim == "" })
	if i < 0 {
		return
	}
	key := c.pvs[i].disk
	c.pvs = slices.Delete(c.pvs, i, i+1)
	if d := f.w.diskAt(key); d != nil && len(d.users) > 0 {
		d.users, d.lastDetach = nil, f.now
	}
}

func (f *fleet) attachOrDetach() {
	if len(f.w.disks) == 0 {
		return
	}
	d := pick(f, f.w.disks)
	if len(d.users) > 0 {
		d.users, d.lastDetach = nil, f.now
		return
	}
	d.users = []string{f.instance(d.key)}
}

// recreateDisk deletes a disk and makes another under the same name: a new
// numeric id, a new clock. Sometimes the name is one reclaim deleted.
func (f *fleet) recreateDisk() {
	var key inventory.DiskKey
	var label string
	switch {
	case len(f.goneDisks) > 0 && f.chance(0.3):
		key = pick(f, f.goneDisks)
		if f.w.diskAt(key) != nil {
			return
		}
	case len(f.w.disks) > 0:
		old := pick(f, f.w.disks)
		if len(old.users) > 0 {
			return
		}
		key = old.key
		label = old.labels[gcedisk.ClusterLabel]
		f.w.removeDisk(old)
		f.byOthers[key.String()]++
	default:
		return
	}
	f.stats.Faults["recreated disk"]++
	f.tracef("recreated disk %s", key)
	if d := f.newDisk(key, f.now); label != "" { // by the same cluster's driver
		d.labels[gcedisk.ClusterLabel] = label
	}
}

func (f *fleet) toggleDiskProtection() {
	if len(f.w.disks) == 0 {
		return
	}
	d := pick(f, f.w.disks)
	if _, ok := d.labels[protectLabel]; ok {
		delete(d.labels, protectLabel)
	} else {
		d.labels[protectLabel] = "keep"
	}
}

// newWorkflow starts an Argo workflow: a PVC, its PV and disk, a running pod.
func (f *fleet) newWorkflow(c *cluster) {
	n := f.w.next()
	f.startWorkflow(c, fmt.Sprintf("wf-%d-workdir", n), fmt.Sprintf("wf-%d", n))
}

func (f *fleet) startWorkflow(c *cluster, claim, wf string) {
	d := f.newDisk(f.diskKey(f.projectFor(c)), f.now)
	d.labels[ownerLabel] = "true"
	f.labelFor(c, d)
	d.users = []string{f.instance(d.key)}
	p := &pvc{name: claim, uid: fmt.Sprintf("uid-%d", f.w.next()), created: f.now, pv: "pv-" + d.key.Name, size: d.sizeGB,
		wf: inventory.WorkflowRef{Namespace: argoNS, Name: wf, Phase: "Running"}}
	c.pvcs = append(c.pvcs, p)
	c.pvs = append(c.pvs, &pv{name: p.pv, disk: d.key, claim: claim, retain: f.chance(0.2)})
	c.pods = append(c.pods, &pod{name: wf + "-pod", claim: claim, phase: "Running"})
}

// finishWorkflow ends a running workflow; its pods end and its disk is
// detached. A successful one's PVC is often collected by Argo itself.
func (f *fleet) finishWorkflow() {
	c := pick(f, f.w.clusters)
	i := slices.IndexFunc(c.pvcs, func(p *pvc) bool { return p.wf.Phase == "Running" })
	if i < 0 {
		return
	}
	p := c.pvcs[i]
	p.wf.Phase, p.wf.Finished = pick(f, []string{"Succeeded", "Failed", "Failed", "Error"}), f.now
	for _, pd := range c.pods {
		if pd.claim == p.name {
			pd.phase = map[bool]string{true: "Succeeded", false: "Failed"}[p.wf.Phase == "Succeeded"]
		}
	}
	if v := f.pvOf(c, p); v != nil {
		if d := f.w.diskAt(v.disk); d != nil {
			d.users, d.lastDetach = nil, f.now
		}
	}
	if p.wf.Phase == "Succeeded" && f.chance(0.5) {
		f.removePVC(c, p)
	}
}

func (f *fleet) pvOf(c *cluster, p *pvc) *pv {
	for _, v := range c.pvs {
		if v.name == p.pv {
			return v
		}
	}
	return nil
}

// removePVC finalizes a PVC: gone from the cluster, and its PV with the
// Delete policy goes with its disk (the CSI driver deletes it); with Retain
// the PV stays, Released, still naming the disk.
func (f *fleet) removePVC(c *cluster, p *pvc) {
	c.pvcs = slices.DeleteFunc(c.pvcs, func(x *pvc) bool { return x == p })
	f.byOthers[k8spvc.ID(c.name, argoNS, p.name)]++ // the fake's delete takes it back
	c.pods = slices.DeleteFunc(c.pods, func(x *pod) bool { return x.claim == p.name && !x.late })
	v := f.pvOf(c, p)
	if v == nil {
		return
	}
	if v.retain {
		v.release = true
		return
	}
	c.pvs = slices.DeleteFunc(c.pvs, func(x *pv) bool { return x == v })
	if d := f.w.diskAt(v.disk); d != nil && len(d.users) == 0 && len(f.w.pvRefs(d.key)) == 0 {
		f.w.removeDisk(d)
		f.byOthers[d.key.String()]++
	}
}

// settleKubernetes finishes what Kubernetes finishes between runs: a
// Terminating PVC no running pod uses is removed; late pods end.
func (f *fleet) settleKubernetes() {
	for _, c := range f.w.clusters {
		for _, pd := range c.pods {
			if pd.phase == "Running" && f.chance(0.3) {
				pd.phase = "Succeeded"
			}
		}
		for _, p := range slices.Clone(c.pvcs) {
			if p.terminating && c.runningPod(p.name) == nil {
				f.removePVC(c, p)
			}
		}
	}
}

// recreatePVC removes a PVC and makes a new one under the same name (a new
// UID, a new workflow run), as a retried workflow with a fixed claim name does.
func (f *fleet) recreatePVC() {
	c := pick(f, f.w.clusters)
	i := slices.IndexFunc(c.pvcs, func(p *pvc) bool { return !p.terminating && c.runningPod(p.name) == nil })
	if i < 0 {
		return
	}
	old := c.pvcs[i]
	f.removePVC(c, old)
	f.stats.Faults["recreated PVC"]++
	f.tracef("recreated PVC %s/%s", c.name, old.name)
	f.startWorkflow(c, old.name, old.wf.Name)
	if f.chance(0.5) { // the retry already finished
		np := c.pvcNamed(old.name)
		np.wf.Phase, np.wf.Finished = "Failed", f.now
		for _, pd := range c.pods {
			if pd.claim == np.name {
				pd.phase = "Failed"
			}
		}
		if d := f.w.diskAt(f.pvOf(c, np).disk); d != nil {
			d.users, d.lastDetach = nil, f.now
		}
	}
}

// debugPod starts a pod that mounts a finished workflow's PVC.
func (f *fleet) debugPod() {
	c := pick(f, f.w.clusters)
	i := slices.IndexFunc(c.pvcs, func(p *pvc) bool { return p.wf.Done() && !p.terminating })
	if i < 0 {
		return
	}
	c.pods = append(c.pods, &pod{name: fmt.Sprintf("debug-%d", f.w.next()), claim: c.pvcs[i].name, phase: "Running"})
}

func (f *fleet) togglePVCProtection() {
	c := pick(f, f.w.clusters)
	if len(c.pvcs) == 0 {
		return
	}
	p := pick(f, c.pvcs)
	p.protected = !p.protected
}

// push pushes an image (sometimes a multi-arch index with two children),
// moving a tag to it from an older image.
func (f *fleet) push(r *repo, at time.Time) *image {
	img := &image{digest: digestOf(f.w.next()), pushed: at, size: int64(1+f.rng.IntN(500)) << 20}
	if f.chance(0.2) {
		img.index = true
		for range 2 {
			ch := &image{digest: digestOf(f.w.next()), pushed: at, size: int64(1+f.rng.IntN(300)) << 20}
			img.children = append(img.children, ch.digest)
			r.images = append(r.images, ch)
		}
	}
	r.images = append(r.images, img)
	if f.chance(0.7) {
		f.setTag(r, img, pick(f, []string{"latest", "v1", "v2", "v3", "main", "dev", fmt.Sprintf("build-%d", f.w.next())}))
	}
	return img
}

// setTag points tag at img; ECR moves it from whichever image had it.
func (f *fleet) setTag(r *repo, img *image, tag string) {
	for _, i := range r.images {
		i.tags = slices.DeleteFunc(i.tags, func(t string) bool { return t == tag })
	}
	img.tags = append(img.tags, tag)
}

// retag moves or adds a tag onto img (a random image if nil).
func (f *fleet) retag(img *image) {
	r := pick(f, f.w.repos)
	if img == nil {
		if len(r.images) == 0 {
			return
		}
		img = pick(f, r.images)
	} else {
		r = f.repoHolding(img)
	}
	f.setTag(r, img, pick(f, []string{"latest", "v1", "v2", "main", fmt.Sprintf("hotfix-%d", f.w.next())}))
}

func (f *fleet) repoHolding(img *image) *repo {
	for _, r := range f.w.repos {
		if slices.Contains(r.images, img) {
			return r
		}
	}
	return nil
}

// newImageRef makes a cluster (one that may pull from the account) or the
// manifests reference an image by tag or digest; a cluster pulls it.
func (f *fleet) newImageRef() {
	r := pick(f, f.w.repos)
	if len(r.images) == 0 {
		return
	}
	img := pick(f, r.images)
	ref := &imgRef{repo: r.key, digest: img.digest}
	if len(img.tags) > 0 && f.chance(0.5) {
		ref.tag, ref.digest = pick(f, img.tags), ""
	}
	if len(f.w.manifests) > 0 && f.chance(0.25) {
		m := pick(f, f.w.manifests)
		m.refs = append(m.refs, ref)
		return
	}
	var can []*cluster
	for _, c := range f.w.clusters {
		if c.couldPull(r.key.Account) {
			can = append(can, c)
		}
	}
	if len(can) == 0 {
		return
	}
	c := pick(f, can)
	c.refs = append(c.refs, ref)
	img.lastPull = f.now
}

func (f *fleet) dropImageRef() {
	c := pick(f, f.w.clusters)
	if len(c.refs) > 0 {
		i := f.rng.IntN(len(c.refs))
		c.refs = slices.Delete(c.refs, i, i+1)
	}
}
