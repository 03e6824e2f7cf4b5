package fleetsim

import (
	"fmt"
	"slices"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// snapshot collects the world as reclaim's collectors would, with this run's
// faults applied.
func (f *fleet) snapshot() inventory.View {
	w := f.w
	snap := inventory.View{TakenAt: f.now, Fleet: f.membership}
	var gceRead gcepd.Listing
	var regs []inventory.RegistryListing
	var users []inventory.ImageSource
	for _, p := range w.projects {
		l := gce.Listing{Project: p, Complete: !f.rf.gcePage[p]}
		if !l.Complete {
			l.Problem = "disks.aggregatedList page 2: googleapi: Error 503: backendError"
		}
		zone := f.rf.zoneWarn[p]
		if zone != "" {
			l.UnknownScopes = map[string]string{"zones/" + zone: "UNREACHABLE: zone " + zone + " is unavailable"}
		}
		for _, d := range w.disks {
			if d.key.Project != p || d.key.Zone == zone || (!l.Complete && f.chance(0.4)) {
				continue
			}
			l.Disks = append(l.Disks, f.inventoryDisk(d))
		}
		gceRead.Disks = append(gceRead.Disks, l)
	}
	for _, c := range w.clusters {
		if f.rf.clusters[c.name] != "not read" {
			snap.Clusters = append(snap.Clusters, f.clusterRefs(c))
		}
	}
	for _, a := range w.accounts {
		reg := inventory.RegistryListing{Account: a, Region: ecrRegion, Complete: !f.rf.registries[a], Pullers: slices.Clone(w.regPullers[a])}
		if !reg.Complete {
			reg.Problem = "DescribeRepositories: ThrottlingException: Rate exceeded"
		}
		if f.rf.regPolicy[a] {
			reg.Pullers, reg.PullersProblem = nil, "GetRegistryPolicy: AccessDeniedException"
		}
		for _, r := range w.repos {
			if r.key.Account != a || (!reg.Complete && f.chance(0.5)) {
				continue
			}
			rl := inventory.RepoListing{Repo: r.key, Complete: !f.rf.repos[r.key], Created: f.now.AddDate(-1, 0, 0), Pullers: slices.Clone(r.pullers)}
			if !rl.Complete {
				rl.Problem = "DescribeImages: ThrottlingException: Rate exceeded"
			}
			for _, img := range r.images {
				if !rl.Complete && f.chance(0.4) {
					continue
				}
				rl.Images.Add(inventoryImage(img))
			}
			reg.Repos = append(reg.Repos, rl)
		}
		regs = append(regs, reg)
	}
	for _, m := range w.manifests {
		src := inventory.ImageSource{Name: m.name, Complete: !f.rf.manifests, Files: len(m.refs)}
		if !src.Complete {
			src.Problems = []string{"clone: remote: 502 Bad Gateway"}
		}
		for i, ref := range m.refs {
			if !src.Complete && f.chance(0.5) {
				continue
			}
			src.Images = append(src.Images, use(ref, fmt.Sprintf("manifests:%s/deploy-%d.yaml", m.name, i)))
		}
		users = append(users, src)
	}
	users = append(users, f.consumers()...)
	users = append(users, f.regionConsumers()...)
	snap.Clouds = map[string]any{gcepd.Read: gceRead, ecrimage.Read: regs, ecrimage.UsersRead: users, ec2interface.Read: f.networks()}
	return snap
}

func use(r *imgRef, where string) inventory.ImageUse {
	return inventory.ImageUse{Ref: inventory.ImageRef{Repo: r.repo, Tag: r.tag, Digest: r.digest}, Where: where, Users: 1}
}

func (f *fleet) inventoryDisk(d *disk) gce.Disk {
	return gce.Disk{Key: d.key, ID: d.id, SizeGB: d.sizeGB, Type: "pd-balanced", Status: "READY",
		Users: slices.Clone(d.users), Labels: copyMap(d.labels), LabelFingerprint: fingerprint(d.labels),
		Created: d.created, LastDetach: d.lastDetach}
}

func inventoryImage(img *image) inventory.Image {
	out := inventory.Image{Digest: img.digest, Tags: slices.Clone(img.tags), PushedAt: img.pushed, LastPull: img.lastPull,
		SizeBytes: img.size, MediaType: inventory.MediaTypeOCIManifest}
	if img.index {
		out.MediaType, out.Children, out.ChildrenKnown = inventory.MediaTypeOCIIndex, slices.Clone(img.children), true
	}
	return out
}

// clusterRefs is one cluster's collection: nothing when unreachable or
// forbidden, some of it after a failed page (the dangerous case).
func (f *fleet) clusterRefs(c *cluster) inventory.ClusterRefs {
	cr := inventory.ClusterRefs{Name: c.name, Complete: true, Projects: c.projects, Accounts: c.accounts,
		Subnets: slices.Clone(c.subnets)}
	if !c.configured {
		cr.Projects, cr.Accounts, cr.Subnets = f.discoveredReach(c)
	}
	fault := f.rf.clusters[c.name]
	switch fault {
	case "conflict": // read completely, but held: a same-name cluster may be it
		cr.Complete, cr.Problems = false, []string{"its name is also that of a discovered cluster reclaim cannot tell apart from it"}
	case "unreachable":
		cr.Complete, cr.Problems = false, []string{"list persistentvolumes: dial tcp 10.0.0.1:443: i/o timeout"}
		return cr
	case "forbidden":
		cr.Complete, cr.Problems = false, []string{`persistentvolumes is forbidden: User "reclaim" cannot list resource "persistentvolumes"`}
		return cr
	case "page":
		cr.Complete, cr.Problems = false, []string{"list pods: page 2: the continue token has expired (410 Gone)"}
	case "workloads":
		cr.Complete, cr.Problems = false, []string{"list jobs: page 3: etcdserver: request timed out"}
	}
	cr.ImagesListed = true
	cr.Taps = map[string]inventory.Tapped{k8spvc.TapName: {Complete: true, Items: len(c.pvcs)}}
	whole := fault == "" || fault == "conflict"
	keep := func() bool { return (whole || fault == "workloads") || f.chance(0.5) }
	cr.WorkloadsListed = whole
	f.workloadRefs(c, &cr, func() bool { return whole || f.chance(0.5) })
	pods := func(claim string) []inventory.PodRef {
		var out []inventory.PodRef
		for _, p := range c.pods {
			if p.claim == claim {
				out = append(out, inventory.PodRef{Namespace: argoNS, Name: p.name, Phase: p.phase})
			}
		}
		return out
	}
	for _, v := range c.pvs {
		if !keep() {
			continue
		}
		ref := inventory.PVRef{Cluster: c.name, Disk: v.disk, PV: v.name, Phase: "Bound"}
		if v.release {
			ref.Phase = "Released"
		}
		if v.claim != "" {
			ref.ClaimNamespace, ref.Claim, ref.Pods = argoNS, v.claim, pods(v.claim)
			if p := c.pvcNamed(v.claim); p != nil {
				wf := p.wf
				ref.Workflow = &wf
			}
		}
		cr.PVs = append(cr.PVs, ref)
	}
	for _, p := range c.pvcs {
		if !keep() {
			continue
		}
		wf := p.wf
		ref := inventory.PVCRef{Cluster: c.name, Namespace: argoNS, Name: p.name, UID: p.uid, Volume: p.pv, CapacityGB: p.size,
			Created: p.created, Terminating: p.terminating, Protected: p.protected, Pods: pods(p.name), Workflow: &wf}
		if v := f.pvOf(c, p); v != nil {
			k := v.disk
			ref.Disk = &k
		}
		cr.PVCs = append(cr.PVCs, ref)
	}
	for i, r := range c.refs {
		if keep() {
			cr.Images = append(cr.Images, use(r, fmt.Sprintf("%s/default/Deployment/app-%d", c.name, i)))
		}
	}
	return cr
}

// observe starts and resets the truth's clocks at this run's collection.
func (f *fleet) observe(snap *inventory.View) {
	listed := map[string]bool{}
	for _, l := range gcepd.ListingOf(snap).Disks {
		for _, d := range l.Disks {
			listed[d.ID] = true
		}
	}
	for _, d := range f.w.disks {
		d.clocks.observe(f.w.diskOrphan(d), listed[d.id] && f.diskEvidence(d) == "", f.now)
	}
	for _, c := range f.w.clusters {
		for _, p := range c.pvcs {
			p.clocks.observe(f.w.pvcOrphan(c, p), f.rf.clusters[c.name] == "", f.now)
		}
	}
	for _, reg := range ecrimage.RegistriesOf(snap) {
		for _, rl := range reg.Repos {
			if !rl.Complete {
				continue
			}
			for i := range rl.Images.Len() {
				listed[rl.Repo.String()+"@"+rl.Images.Digest(i)] = true
			}
		}
	}
	for _, r := range f.w.repos {
		for _, img := range r.images {
			img.clocks.observe(f.w.imageUsers(r, img, false) == "", listed[r.key.String()+"@"+img.digest] && f.imageEvidence(r) == "", f.now)
		}
	}
	f.observeWorkloads(snap)
	f.observeNetwork(snap)
}

// diskEvidence says which source a disk relies on was incomplete this run:
// any cluster that could reference its project, the cluster its label
// names there, or (discovery on) the project's discovery or a cluster
// discovery lists in it.
func (f *fleet) diskEvidence(d *disk) string {
	project := d.key.Project
	for _, c := range f.w.clusters {
		if why := f.rf.clusters[c.name]; why != "" && c.couldReference(project) {
			return "cluster " + c.name + " " + why
		}
	}
	if name := d.labels[gcedisk.ClusterLabel]; name != "" {
		if why := f.namedEvidence(inventory.GKE, project, name); why != "" {
			return why
		}
	}
	return f.scopeEvidence(inventory.GKE, project)
}

// imageEvidence: any cluster that could pull from the account, any
// manifest source or consumer, the registry's and the repository's
// listings, who their policies let pull, and (discovery on) the EKS
// clusters of the account.
func (f *fleet) imageEvidence(r *repo) string {
	k := r.key
	for _, c := range f.w.clusters {
		if why := f.rf.clusters[c.name]; why != "" && c.couldPull(k.Account) {
			return "cluster " + c.name + " " + why
		}
	}
	switch {
	case f.rf.manifests:
		return "manifests incomplete"
	case f.rf.registries[k.Account]:
		return "registry listing partial"
	case f.rf.repos[k]:
		return "repository listing throttled"
	}
	if why := f.pullerEvidence(r); why != "" {
		return why
	}
	if why := f.regionEvidence(k.Account); why != "" {
		return why
	}
	return f.accountEvidence(k.Account)
}
