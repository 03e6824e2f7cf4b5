package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"reclaim.dev/reclaim/inventory"
)

// PDCSIDriver is the GCE PD CSI driver name.
const PDCSIDriver = "pd.csi.storage.gke.io"

// Zone label and topology keys, in the order they are consulted.
var (
	zoneLabels       = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}
	zoneTopologyKeys = map[string]bool{
		"topology.gke.io/zone":                   true,
		"topology.kubernetes.io/zone":            true,
		"failure-domain.beta.kubernetes.io/zone": true,
	}
)

// multiZoneSep joins zones in a regional PD's zone label (us-central1-a__us-central1-b).
const multiZoneSep = "__"

// PVDisk returns the GCE disk a PersistentVolume references. ok is false for
// PVs that are not GCE PDs (other CSI drivers, NFS, ...). A GCE PD CSI PV
// whose volumeHandle cannot be parsed returns ok=true and a non-nil error.
func PVDisk(pv *corev1.PersistentVolume) (key inventory.DiskKey, ok bool, err error) {
	if csi := pv.Spec.CSI; csi != nil {
		if csi.Driver != PDCSIDriver {
			return inventory.DiskKey{}, false, nil
		}
		k, err := inventory.ParseDiskKey(csi.VolumeHandle)
		if err != nil {
			return inventory.DiskKey{}, true, fmt.Errorf("unparseable spec.csi.volumeHandle: %v", err)
		}
		return k, true, nil
	}
	gce := pv.Spec.GCEPersistentDisk
	if gce == nil {
		return inventory.DiskKey{}, false, nil
	}
	if gce.PDName == "" {
		return inventory.DiskKey{}, true, fmt.Errorf("spec.gcePersistentDisk.pdName is empty")
	}
	k := inventory.DiskKey{Project: inventory.Unspecified, Name: gce.PDName}
	k.Zone, k.Region = pvLocation(pv)
	return k, true, nil
}

// pvLocation finds an in-tree PV's zone (or region, for a regional disk) from
// its zone labels, else its node affinity, else Unspecified.
func pvLocation(pv *corev1.PersistentVolume) (zone, region string) {
	for _, l := range zoneLabels {
		v := strings.TrimSpace(pv.Labels[l])
		if v == "" {
			continue
		}
		var zones []string
		for _, z := range strings.Split(v, multiZoneSep) {
			if z = strings.TrimSpace(z); z != "" {
				zones = append(zones, z)
			}
		}
		if z, r, ok := fromZones(zones); ok {
			return z, r
		}
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		seen := map[string]bool{}
		var zones []string
		for _, term := range na.Required.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if !zoneTopologyKeys[e.Key] || e.Operator != corev1.NodeSelectorOpIn {
					continue
				}
				for _, z := range e.Values {
					if z != "" && !seen[z] {
						seen[z] = true
						zones = append(zones, z)
					}
				}
			}
		}
		if z, r, ok := fromZones(zones); ok {
			return z, r
		}
	}
	return inventory.Unspecified, ""
}

// fromZones maps one zone to itself and several zones of one region to that
// region. Zones in several regions say nothing usable.
func fromZones(zones []string) (zone, region string, ok bool) {
	switch len(zones) {
	case 0:
		return "", "", false
	case 1:
		return zones[0], "", true
	}
	r := inventory.RegionOfZone(zones[0])
	for _, z := range zones[1:] {
		if inventory.RegionOfZone(z) != r {
			return "", "", false
		}
	}
	return "", r, true
}

// gib rounds a storage quantity up to whole GiB; nil or missing is 0.
func gib(q *resource.Quantity) int64 {
	if q == nil {
		return 0
	}
	b := q.Value() // rounds up
	if b <= 0 {
		return 0
	}
	const g = 1 << 30
	return (b + g - 1) / g
}

func storage(rl corev1.ResourceList) *resource.Quantity {
	if q, ok := rl[corev1.ResourceStorage]; ok {
		return &q
	}
	return nil
}

func sortPods(p []inventory.PodRef) {
	sort.Slice(p, func(i, j int) bool {
		if p[i].Namespace != p[j].Namespace {
			return p[i].Namespace < p[j].Namespace
		}
		return p[i].Name < p[j].Name
	})
}
