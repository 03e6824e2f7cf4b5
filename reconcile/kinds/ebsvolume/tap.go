package ebsvolume

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
)

// The kind's reads of each cluster: its PersistentVolumes and its pods'
// inline volumes, each a pass of its own (inventory.TapKey(TapPVs, cluster)).
// A pass that fails holds every volume the cluster could attach.
const (
	TapPVs  = "ebs-pvs"
	TapPods = "ebs-pod-volumes"
)

// CSIDriver is the EBS CSI driver's name in a PV's spec.csi.driver.
const CSIDriver = "ebs.csi.aws.com"

// Ref is one thing in a cluster that names a volume: a PV (with its claim),
// or a pod's inline awsElasticBlockStore volume.
type Ref struct {
	PV             string
	ClaimNamespace string
	Claim          string
	// Pod is namespace/name of a pod naming it inline.
	Pod string
}

// refs are one cluster's references, by volume id.
type refs map[string][]Ref

// Taps are the kind's reads of each cluster (app makes them when the kind
// is on, and an agent always: they need nothing of its section).
func Taps(*config.Config) []kube.Tap { return taps }

var taps = []kube.Tap{
	{Name: TapPVs, Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"},
		New: func(string) kube.TapSink { return pvSink{} }, Decode: published.DecodeAs[refs]},
	{Name: TapPods, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		New: func(string) kube.TapSink { return podSink{} }, Decode: published.DecodeAs[refs]},
}

type pvSink refs

func (s pvSink) Add(u *unstructured.Unstructured) error {
	id := ""
	if d, _, _ := unstructured.NestedString(u.Object, "spec", "csi", "driver"); d == CSIDriver {
		id, _, _ = unstructured.NestedString(u.Object, "spec", "csi", "volumeHandle")
	} else if v, ok, _ := unstructured.NestedString(u.Object, "spec", "awsElasticBlockStore", "volumeID"); ok {
		id = VolumeID(v)
	}
	if id == "" {
		return nil
	}
	r := Ref{PV: u.GetName()}
	r.ClaimNamespace, _, _ = unstructured.NestedString(u.Object, "spec", "claimRef", "namespace")
	r.Claim, _, _ = unstructured.NestedString(u.Object, "spec", "claimRef", "name")
	s[id] = append(s[id], r)
	return nil
}

func (s pvSink) Result() any { return refs(s) }

type podSink refs

func (s podSink) Add(u *unstructured.Unstructured) error {
	vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumes")
	for _, v := range vols {
		m, _ := v.(map[string]any)
		ebs, _ := m["awsElasticBlockStore"].(map[string]any)
		if id, _ := ebs["volumeID"].(string); id != "" {
			id = VolumeID(id)
			s[id] = append(s[id], Ref{Pod: u.GetNamespace() + "/" + u.GetName()})
		}
	}
	return nil
}

func (s podSink) Result() any { return refs(s) }

// VolumeID is the volume id an in-tree volumeID names: "vol-…", or
// "aws://us-east-1a/vol-…".
func VolumeID(v string) string {
	if i := strings.LastIndex(v, "/"); i >= 0 {
		return v[i+1:]
	}
	return v
}
