// Package inventory holds reclaim's snapshot model: what the clusters
// reference, what the cloud reads returned (by name: a kind's own types,
// View.Clouds), and whether each source was complete. Providers and
// collectors convert SDK and Kubernetes objects into their own types at
// their edge; the planner sees nothing else.
package inventory

import (
	"fmt"
	"strings"
	"time"
)

// DiskKey names a GCE disk the way the PD CSI driver does:
// projects/P/zones/Z/disks/D or projects/P/regions/R/disks/D.
type DiskKey struct {
	Project string
	// Exactly one of Zone and Region is set for a real disk. A reference parsed from
	// a PV may carry Unspecified in Project or Zone (csi-translation-lib does this).
	Zone   string
	Region string
	Name   string
}

// Unspecified is what csi-translation-lib writes when it does not know a project or zone.
const Unspecified = "UNSPECIFIED"

func (k DiskKey) String() string {
	if k.Region != "" {
		return fmt.Sprintf("projects/%s/regions/%s/disks/%s", k.Project, k.Region, k.Name)
	}
	return fmt.Sprintf("projects/%s/zones/%s/disks/%s", k.Project, k.Zone, k.Name)
}

// Location is the zone of a zonal disk or the region of a regional one.
func (k DiskKey) Location() string {
	if k.Region != "" {
		return k.Region
	}
	return k.Zone
}

// ParseDiskKey parses projects/P/zones/Z/disks/D and projects/P/regions/R/disks/D,
// with or without a leading https://www.googleapis.com/compute/v1/ prefix.
func ParseDiskKey(s string) (DiskKey, error) {
	s = trimComputePrefix(s)
	p := strings.Split(s, "/")
	if len(p) != 6 || p[0] != "projects" || p[4] != "disks" || p[1] == "" || p[3] == "" || p[5] == "" {
		return DiskKey{}, fmt.Errorf("disk handle %q: want projects/P/zones/Z/disks/D or projects/P/regions/R/disks/D", s)
	}
	switch p[2] {
	case "zones":
		return DiskKey{Project: p[1], Zone: p[3], Name: p[5]}, nil
	case "regions":
		return DiskKey{Project: p[1], Region: p[3], Name: p[5]}, nil
	}
	return DiskKey{}, fmt.Errorf("disk handle %q: want zones or regions, got %q", s, p[2])
}

func trimComputePrefix(s string) string {
	if i := strings.Index(s, "/projects/"); i >= 0 && strings.HasPrefix(s, "http") {
		return s[i+1:]
	}
	return s
}

// LastSegment returns what follows the last slash of a GCE URL (a zone, a disk type).
func LastSegment(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// RegionOfZone maps "asia-northeast1-a" to "asia-northeast1".
func RegionOfZone(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

// QuotaRegion is the region of the disk the key names: its own for a regional
// disk, its zone's for a zonal one, "" when the zone is unspecified.
func (k DiskKey) QuotaRegion() string {
	switch {
	case k.Region != "":
		return k.Region
	case k.Zone == Unspecified:
		return ""
	}
	return RegionOfZone(k.Zone)
}

// PVRef is one PersistentVolume that references a GCE disk, with what uses it.
type PVRef struct {
	Cluster string
	Disk    DiskKey // Project or Zone may be Unspecified
	PV      string
	Phase   string // Bound, Released, Available, Failed
	// Claim is the PVC the PV is bound to, if any.
	ClaimNamespace string
	Claim          string
	// Protected is true when the PV or its PVC carries the opt-out label.
	Protected  bool
	Pods       []PodRef
	Workflow   *WorkflowRef
	CapacityGB int64
}

// PodRef is a pod that mounts a PVC.
type PodRef struct {
	Namespace string
	Name      string
	Phase     string // Pending, Running, Succeeded, Failed, Unknown
}

// Running reports whether the pod is, or may soon be, using its volumes.
func (p PodRef) Running() bool {
	return p.Phase == "Running" || p.Phase == "Pending" || p.Phase == "Unknown" || p.Phase == ""
}

// WorkflowRef is the Argo Workflow that owns a PVC.
type WorkflowRef struct {
	Namespace string
	Name      string
	// UID is the owner reference's ("" when the PVC names its Workflow by
	// label only): a Workflow of that name with another UID is not its owner.
	UID string
	// Phase and Finished are the Workflow's, when it was read (the k8s-pvc
	// kind's workflows tap): "" when it was not found.
	Phase    string // Pending, Running, Succeeded, Failed, Error
	Finished time.Time
}

// Done reports whether the workflow has finished, successfully or not.
func (w WorkflowRef) Done() bool {
	return w.Phase == "Succeeded" || w.Phase == "Failed" || w.Phase == "Error"
}

// PVCRef is a PersistentVolumeClaim, for Kubernetes-level findings.
type PVCRef struct {
	Cluster    string
	Namespace  string
	Name       string
	UID        string
	Volume     string // bound PV name
	CapacityGB int64
	Created    time.Time
	// Terminating is set once the PVC has a deletionTimestamp: a delete was
	// made and Kubernetes (pvc-protection) finishes it when no pod uses it.
	Terminating bool
	Protected   bool
	Pods        []PodRef
	Workflow    *WorkflowRef
	Disk        *DiskKey // the GCE disk behind the bound PV, if any
}

// ClusterRefs is what one cluster references, and whether we may trust its absence.
type ClusterRefs struct {
	Name string
	// Complete is true only if every list that could hold a reference succeeded
	// to its last page. Problems say why not, in words an operator can act on.
	Complete bool
	Problems []string
	// Projects limits which GCE projects this cluster's PVs can point at; empty
	// means any project, so an incomplete cluster blocks every disk deletion.
	Projects []string
	PVs      []PVRef
	PVCs     []PVCRef
	Duration time.Duration
	// ReadAt is when the view began: a direct read's start, or the time
	// an agent's record says it was taken. What was made in the cluster
	// after it is not in the view, so the engine deletes on it only while
	// it is fresh (engine.Settings.FreshViews).
	ReadAt time.Time
	// Settles, if set, is when the view is believed whole: until then it
	// keeps what it shows in use but releases nothing (a cluster's first
	// records, or a class of evidence new in them, not yet settled).
	Settles time.Time

	// Accounts limits which AWS accounts' ECR images this cluster may pull;
	// empty means any account, so an incomplete cluster blocks every trim.
	Accounts []string
	// ImagesListed is true when image sources (pods and workload templates)
	// were listed; Images are the distinct ECR references found.
	ImagesListed bool
	Images       []ImageUse

	// Subnets limits which EC2 subnets this cluster's pods and nodes can hold
	// addresses in; empty means any, so an incomplete cluster holds every
	// interface deletion.
	Subnets []string
	// WorkloadsListed is true when Jobs, CronJobs, Pods and Nodes were listed
	// (the jobs, pods or ec2Interfaces sections ask for them).
	WorkloadsListed bool
	// JobsVersion and PodsVersion are the resourceVersions of the Job and
	// Pod listings: what they showed is at most that version.
	JobsVersion, PodsVersion string
	Jobs                     []Job
	CronJobs                 []CronJob
	Pods                     []Pod
	Nodes                    []Node
	// NamespaceLabels are, per namespace, the labels kept of it: its owner
	// label (notify.ownerLabel), for the objects that carry none.
	NamespaceLabels map[string]map[string]string
	// Taps are what the kinds' own reads (kube.Tap) found, by tap name. A
	// tap missing here was not read in this cluster.
	Taps map[string]Tapped
}

// The collector's own reads of a cluster beside its volumes (kube.Options
// Images and Workloads), by the names kinds rely on them with: a proposal
// names TapKey(ReadWorkloads, cluster), and the engine holds it
// when the cluster was read without them.
const (
	ReadImages    = "images"
	ReadWorkloads = "workloads"
)

// Reads says, for each of the collector's own reads, whether c was asked
// for it: listed, or the cluster incomplete anyway (then the cluster's own
// source holds what relies on it, with its problems).
func (c *ClusterRefs) Reads() map[string]bool {
	return map[string]bool{ReadImages: c.ImagesListed || !c.Complete, ReadWorkloads: c.WorkloadsListed || !c.Complete}
}

// Tapped is one tap's pass over one cluster.
type Tapped struct {
	// Complete is true only when the pass reached its last page.
	Complete bool
	Problem  string
	// Items counts the objects listed; Version is the list's resourceVersion.
	Items   int
	Version string
	// Data is what the tap's sink made of the objects.
	Data any
}

// CouldPull reports whether this cluster could run images of an AWS account.
func (c ClusterRefs) CouldPull(account string) bool {
	if len(c.Accounts) == 0 {
		return true
	}
	for _, a := range c.Accounts {
		if a == account {
			return true
		}
	}
	return false
}

// CouldReference reports whether this cluster could hold a reference to a disk in project.
func (c ClusterRefs) CouldReference(project string) bool {
	if len(c.Projects) == 0 {
		return true
	}
	for _, p := range c.Projects {
		if p == project {
			return true
		}
	}
	return false
}

// View is everything one run collected. Cloud inventory is listed before the
// clusters, so the cluster view is the fresher one.
type View struct {
	TakenAt  time.Time
	Clusters []ClusterRefs
	// Fleet is every cluster known (configured, discovered, declared) and
	// what reclaim did with it; nil when the run did not assemble one.
	Fleet *Fleet
	// Clouds are what the run's cloud reads returned, by the read's name
	// (CollectOptions.Clouds; CloudOf reads one).
	Clouds map[string]any
}
