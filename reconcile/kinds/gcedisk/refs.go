package gcedisk

import (
	"fmt"
	"strings"

	"reclaim.dev/reclaim/inventory"
)

// refIndex finds the PV references that could point at a disk, by disk name.
type refIndex map[string][]inventory.PVRef

func indexRefs(clusters []inventory.ClusterRefs) refIndex {
	idx := refIndex{}
	for _, c := range clusters {
		for _, r := range c.PVs {
			idx[r.Disk.Name] = append(idx[r.Disk.Name], r)
		}
	}
	return idx
}

// matching returns the references that may mean this disk. UNSPECIFIED project
// or zone (written by csi-translation-lib) matches anything: keeping a disk by a
// vague reference is cheap, deleting it by a vague non-match is not.
func (idx refIndex) matching(k inventory.DiskKey) []inventory.PVRef {
	var out []inventory.PVRef
	for _, r := range idx[k.Name] {
		rk := r.Disk
		if rk.Project != inventory.Unspecified && rk.Project != "" && rk.Project != k.Project {
			continue
		}
		if !locationMatches(rk, k) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func locationMatches(ref, disk inventory.DiskKey) bool {
	switch {
	case ref.Zone == inventory.Unspecified || (ref.Zone == "" && ref.Region == ""):
		return true
	case ref.Zone != "":
		return disk.Zone == ref.Zone || disk.Region == inventory.RegionOfZone(ref.Zone)
	default: // ref names a region
		return disk.Region == ref.Region || inventory.RegionOfZone(disk.Zone) == ref.Region
	}
}

func describeRef(r inventory.PVRef) string {
	if r.PV == "" {
		pods := make([]string, 0, len(r.Pods))
		for _, p := range r.Pods {
			pods = append(pods, p.Namespace+"/"+p.Name)
		}
		return fmt.Sprintf("mounted inline (gcePersistentDisk) by pod %s in cluster %s", strings.Join(pods, ", "), r.Cluster)
	}
	s := fmt.Sprintf("referenced by PV %s in cluster %s (%s", r.PV, r.Cluster, orDefault(r.Phase, "phase unknown"))
	if r.Claim != "" {
		s += fmt.Sprintf(", bound to %s/%s", r.ClaimNamespace, r.Claim)
	}
	s += ")"
	if len(r.Pods) > 0 {
		s += fmt.Sprintf(", mounted by pod %s/%s (%s)", r.Pods[0].Namespace, r.Pods[0].Name, r.Pods[0].Phase)
		if len(r.Pods) > 1 {
			s += fmt.Sprintf(" and %d more", len(r.Pods)-1)
		}
	}
	if w := r.Workflow; w != nil {
		s += fmt.Sprintf(", owned by Workflow %s/%s (%s)", w.Namespace, w.Name, orDefault(w.Phase, "gone"))
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
