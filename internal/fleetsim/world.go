// Package fleetsim is a seeded, reproducible randomized-fleet simulator: a
// ground-truth world of clusters (with Jobs, CronJobs, pods and nodes), GCE
// disks, workflow PVCs, ECR images and EC2 subnets and network interfaces that
// reclaim plans and applies against for several runs, with faults injected
// into what it collects and into the calls it makes. Clusters run somewhere
// discovery may list, some share a name across scopes (scopes.go), and
// accounts outside the fleet may pull (pullers.go). The fake APIs check the
// safety invariants at each mutating call against the truth, and the fleet
// checks the rest after each run (see check.go).
package fleetsim

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
)

const (
	ownerLabel   = "goog-gke-volume"
	protectLabel = "reclaim-protect"
	argoNS       = "argo"
	region       = "us-east1"
	ecrRegion    = "us-east-1"
	westRegion   = "us-west-2" // some same-name clusters' EKS region
)

// disk is one GCE disk of the truth. A recreated disk is a new *disk under
// the same key, with a new numeric id: its clocks start again.
type disk struct {
	key        inventory.DiskKey
	id         string
	sizeGB     int64
	labels     map[string]string
	users      []string
	created    time.Time
	lastDetach time.Time
	clocks
}

// clocks are the truth's grace clocks for one object (one identity): the first
// run time it was observed unreferenced. strict resets whenever the truth had
// a reference at a run; lenient only when the run could see it (its sources
// complete and the object listed), as the engine keeps a held clock.
type clocks struct {
	strict, lenient time.Time
}

func (c *clocks) observe(orphan, visible bool, now time.Time) {
	switch {
	case orphan:
		if c.strict.IsZero() {
			c.strict = now
		}
		if c.lenient.IsZero() {
			c.lenient = now
		}
	default:
		c.strict = time.Time{}
		if visible {
			c.lenient = time.Time{}
		}
	}
}

// pv is a PersistentVolume that references a disk. late: made between a
// run's snapshot and its apply, so reclaim could not have seen it.
type pv struct {
	name    string
	disk    inventory.DiskKey
	claim   string // in argoNS, "" for a static PV
	retain  bool
	late    bool
	release bool // the claim is gone: Released
}

type pvc struct {
	name, uid   string
	created     time.Time
	wf          inventory.WorkflowRef
	protected   bool
	terminating bool // deleted while a pod used it: pvc-protection holds it
	pv          string
	size        int64
	clocks
}

type pod struct {
	name, claim string
	phase       string
	late        bool
}

// imgRef is an image reference by tag, digest or both.
type imgRef struct {
	repo        inventory.RepoKey
	tag, digest string
	late        bool
}

type cluster struct {
	name     string
	projects []string // empty: any project
	accounts []string // empty: any account
	pvs      []*pv
	pvcs     []*pvc
	pods     []*pod
	refs     []*imgRef
	// subnets are its awsSubnets (empty: any); the rest its workloads.
	subnets []string
	jobs    []*job
	crons   []*cronJob
	wpods   []*wpod
	nodes   []*node
	// rv is the cluster's newest resourceVersion (see versioned).
	rv uint64
	// home is where it runs; cloud is the name its cloud and its tags use
	// ("": its name).
	home  home
	cloud string
	// configured: an entry of clusters[]; where is what the entry says of
	// its home. A cluster discovery lists that is not configured has a
	// state: what the config makes of it (a member state; "" when no
	// discovery lists it: reclaim does not know it).
	configured bool
	where      inventory.Place
	state      string
}

// versioned is an object's resourceVersion as an apiserver keeps it: a
// new one whenever what reclaim reads of the object changed since the last
// snapshot (the truth is changed in many places; comparing what a listing
// would show catches every one of them).
type versioned struct {
	rv    uint64
	shown string
}

// version returns the object's resourceVersion for what it shows now.
func (v *versioned) version(c *cluster, shown string) string {
	if v.rv == 0 || v.shown != shown {
		c.rv++
		v.rv, v.shown = c.rv, shown
	}
	return strconv.FormatUint(v.rv, 10)
}

func (c *cluster) couldReference(project string) bool {
	return len(c.projects) == 0 || slices.Contains(c.projects, project)
}

func (c *cluster) couldPull(account string) bool {
	return len(c.accounts) == 0 || slices.Contains(c.accounts, account)
}

func (c *cluster) pvcNamed(name string) *pvc {
	for _, p := range c.pvcs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (c *cluster) runningPod(claim string) *pod {
	for _, p := range c.pods {
		if p.claim == claim && (inventory.PodRef{Phase: p.phase}).Running() {
			return p
		}
	}
	return nil
}

type image struct {
	digest   string
	tags     []string
	pushed   time.Time
	lastPull time.Time
	size     int64
	index    bool
	children []string
	clocks
}

type repo struct {
	key    inventory.RepoKey
	images []*image
	// pullers are who its policy lets pull besides its own account.
	pullers []string
}

func (r *repo) image(digest string) *image {
	for _, i := range r.images {
		if i.digest == digest {
			return i
		}
	}
	return nil
}

func (r *repo) tagged(tag string) *image {
	for _, i := range r.images {
		if slices.Contains(i.tags, tag) {
			return i
		}
	}
	return nil
}

// parents are the indexes of the repository that list digest.
func (r *repo) parents(digest string) []*image {
	var out []*image
	for _, i := range r.images {
		if i.index && slices.Contains(i.children, digest) {
			out = append(out, i)
		}
	}
	return out
}

type manifest struct {
	name string
	refs []*imgRef
}

// world is the ground truth of one fleet.
type world struct {
	projects []string
	zones    []string
	accounts []string
	clusters []*cluster
	// unseen are clusters reclaim never reads: the config misses them, or
	// discovery lists them but the config does not read them. The cloud's
	// evidence (a tag, a label, discovery) names them.
	unseen    []*cluster
	disks     []*disk
	repos     []*repo
	manifests []*manifest
	subnets   []*subnet
	ifaces    []*iface
	serial    int
	// regions are the EKS regions with subnets.
	regions []string
	// mode is how the config makes the fleet (fleetNil, fleetOff, fleetOn);
	// eksScopes and gkeScopes are where discovery looks.
	mode                 int
	eksScopes, gkeScopes []string
	// foreign are accounts outside the fleet that policies let pull;
	// regPullers who each registry's policy lets pull; declared the
	// pullers declared out of scope (ecr.outOfScopePullers).
	foreign    []*foreign
	regPullers map[string][]string
	declared   map[string]string
	// enabled are the registry accounts' regions discovery lists (none:
	// not listed); remote their consumers in another region.
	enabled map[string][]string
	remote  []*foreign
}

func (w *world) next() int { w.serial++; return w.serial }

func (w *world) diskAt(key inventory.DiskKey) *disk {
	for _, d := range w.disks {
		if d.key == key {
			return d
		}
	}
	return nil
}

func (w *world) removeDisk(d *disk) {
	w.disks = slices.DeleteFunc(w.disks, func(x *disk) bool { return x == d })
}

func (w *world) repoOf(key inventory.RepoKey) *repo {
	for _, r := range w.repos {
		if r.key == key {
			return r
		}
	}
	return nil
}

func (w *world) clusterNamed(name string) *cluster {
	for _, c := range w.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

// pvRefs are the PVs of any cluster, read or not, that reference key; a
// cluster declared out of scope protects nothing.
func (w *world) pvRefs(key inventory.DiskKey) (refs []*pv) {
	for _, c := range w.all() {
		if c.outOfScope() {
			continue
		}
		for _, p := range c.pvs {
			if p.disk == key {
				refs = append(refs, p)
			}
		}
	}
	return refs
}

// diskOrphan: what the disk kind must see before it may delete: no users, no
// PV, not protected.
func (w *world) diskOrphan(d *disk) bool {
	_, prot := d.labels[protectLabel]
	return len(d.users) == 0 && len(w.pvRefs(d.key)) == 0 && !prot
}

// imageUsers says who references img in the truth (by digest, or by a tag it
// holds now, directly or through an index that lists it), or "". Only
// uses the config leaves protected count, unless declared: then those a
// declaration (fleet.outOfScope, ecr.outOfScopePullers) gave up count too.
func (w *world) imageUsers(r *repo, img *image, declared bool) string {
	seen := map[*image]bool{}
	var users func(i *image) string
	users = func(i *image) string {
		if seen[i] {
			return ""
		}
		seen[i] = true
		match := func(ref *imgRef) bool {
			return ref.repo == r.key && (ref.digest == i.digest || ref.tag != "" && slices.Contains(i.tags, ref.tag))
		}
		for _, c := range w.all() {
			if !declared && !w.protects(c, r) {
				continue
			}
			for _, ref := range c.refs {
				if match(ref) {
					return "cluster " + c.name
				}
			}
		}
		for _, fa := range slices.Concat(w.foreign, w.remote) {
			if !declared && !w.protected(fa.account, r) {
				continue
			}
			for _, ref := range fa.refs {
				if match(ref) {
					return fa.kind + " of account " + fa.account
				}
			}
		}
		for _, m := range w.manifests {
			for _, ref := range m.refs {
				if match(ref) {
					return "manifests " + m.name
				}
			}
		}
		for _, p := range r.parents(i.digest) {
			if u := users(p); u != "" {
				return u + " through index " + p.digest[:15]
			}
		}
		return ""
	}
	return users(img)
}

func (w *world) pvcOrphan(c *cluster, p *pvc) bool {
	return p.wf.Done() && c.runningPod(p.name) == nil && !p.protected && !p.terminating
}

// fingerprint is a content hash of labels, as GCE's labelFingerprint is: a
// disk recreated with the same labels has the same fingerprint.
func fingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + ";")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

func digestOf(n int) string { return fmt.Sprintf("sha256:%064x", n) }

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
