package demo

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
)

// The EBS part of the demo: etl-use1 runs Kafka on a managed node group
// with gp3 volumes, and old-batch-use1, the cluster the batch platform ran
// on until last month, was deleted without its volumes. configs/demo.yaml
// declares it out of scope (by platform, account, region and name), so
// its leftovers are no one's.
const (
	// TornDownCluster is the deleted cluster whose volumes were left behind.
	TornDownCluster = "old-batch-use1"
	// GP3QuotaCode is Service Quotas' "Storage for General Purpose SSD
	// (gp3) volumes, in TiB".
	GP3QuotaCode = "L-7A658B76"
	gp3QuotaTiB  = 13
	// tornDownVolumes are old-batch-use1's leftovers: more than one run's
	// cap (ebs.caps.maxDeletesPerRun, 10), so a second run takes the rest.
	tornDownVolumes = 12
)

// EBS is what the EBS part seeded, for the demo's narration and tests.
type EBS struct {
	// Orphans are the torn-down cluster's volumes, past their grace.
	Orphans []string
	// Protected is a leftover someone tagged reclaim.dev/protect.
	Protected string
	// InUse are the volumes etl-use1's PVs name, attached; Retained is
	// one a Released PV (reclaim policy Retain) still names.
	InUse    []string
	Retained string
	// HandMade is a volume nothing says Kubernetes made.
	HandMade string
	// UsedGiB is every gp3 volume's size: the quota's usage.
	UsedGiB int64
}

// SeedEBS seeds the EBS fake (volumes and the gp3 storage quota) and the
// PVs of etl-use1 (which SeedEKS added to f), and the state of earlier
// runs: the torn-down cluster's volumes first seen 30 hours ago, past the
// 24h grace.
func SeedEBS(srv *ebsfake.Server, f *Fleet, now time.Time) EBS {
	var etl *Cluster
	for _, c := range f.Clusters {
		if c.Name == "etl-use1" {
			etl = c
		}
	}
	if etl == nil {
		etl = &Cluster{Name: "etl-use1"}
		f.Clusters = append(f.Clusters, etl)
	}
	day := 24 * time.Hour
	var out EBS
	add := func(v ebsfake.Volume) string {
		if v.Type == "" {
			v.Type = "gp3"
		}
		if v.Type == "gp3" {
			out.UsedGiB += v.SizeGiB
		}
		return srv.AddVolume(EC2Account, v)
	}
	csi := func(cluster, ns, pvc string, extra map[string]string) map[string]string {
		t := map[string]string{ebsvolume.TagCSICluster: "true", ebsvolume.TagCreatedForPVC: pvc, ebsvolume.TagCreatedForNS: ns,
			ebsvolume.TagCreatedForPV: "pvc-" + pvc, "kubernetes.io/cluster/" + cluster: "owned"}
		for k, v := range extra {
			t[k] = v
		}
		return t
	}
	// Kafka on etl-use1: three brokers, each volume attached to its node.
	for i := range 3 {
		claim := fmt.Sprintf("data-kafka-%d", i)
		id := add(ebsfake.Volume{AZ: fmt.Sprintf("%s%c", EC2Region, 'a'+i), SizeGiB: 1000, Created: now.Add(-200 * day),
			Tags: csi("etl-use1", "kafka", claim, nil), Instances: []string{fmt.Sprintf("i-0a1b2c3d4e5f6%04d", i)}})
		out.InUse = append(out.InUse, id)
		etl.Objects = append(etl.Objects, ebsPV(id, "kafka", claim, corev1.PersistentVolumeReclaimDelete, corev1.VolumeBound))
	}
	// A Released PV whose claim was deleted: the data is kept on purpose.
	out.Retained = add(ebsfake.Volume{AZ: EC2Region + "a", SizeGiB: 500, Created: now.Add(-90 * day),
		Tags: csi("etl-use1", "reports", "archive", nil)})
	etl.Objects = append(etl.Objects, ebsPV(out.Retained, "reports", "archive", corev1.PersistentVolumeReclaimRetain, corev1.VolumeReleased))
	// old-batch-use1's leftovers: its StatefulSets' volumes, detached when
	// the cluster was deleted a month ago.
	for i := range tornDownVolumes {
		id := add(ebsfake.Volume{AZ: fmt.Sprintf("%s%c", EC2Region, 'a'+i%3), SizeGiB: 500, Created: now.Add(-300 * day),
			Tags: csi(TornDownCluster, "spark", fmt.Sprintf("shuffle-spark-worker-%d", i), nil)})
		out.Orphans = append(out.Orphans, id)
		f.State.Seen(ebsvolume.ID(EC2Account, EC2Region, id), id, now.Add(-30*time.Hour))
	}
	out.Protected = add(ebsfake.Volume{AZ: EC2Region + "b", SizeGiB: 500, Created: now.Add(-300 * day),
		Tags: csi(TornDownCluster, "audit", "data-ledger-0", map[string]string{"reclaim.dev/protect": "legal hold, ticket SEC-88"})})
	f.State.Seen(ebsvolume.ID(EC2Account, EC2Region, out.Protected), out.Protected, now.Add(-30*time.Hour))
	// Made by hand for a migration: no provisioner's tags.
	out.HandMade = add(ebsfake.Volume{AZ: EC2Region + "c", SizeGiB: 2000, Created: now.Add(-60 * day),
		Tags: map[string]string{"Name": "pg-migration-scratch"}})

	srv.SetQuota(EC2Account, GP3QuotaCode, "Storage for General Purpose SSD (gp3) volumes, in TiB", gp3QuotaTiB, "None")
	// Earlier hourly runs saw gp3 usage flat at today's: the leak is old,
	// and nothing frees it.
	key := "ebs/" + ebsvolume.Pool(EC2Account, EC2Region, "gp3")
	if f.State.Usage == nil {
		f.State.Usage = map[string][]layout.Sample{}
	}
	for h := 24; h >= 1; h-- {
		f.State.Usage[key] = append(f.State.Usage[key], layout.Sample{T: now.Add(-time.Duration(h) * time.Hour), Usage: float64(out.UsedGiB)})
	}
	return out
}

// ebsPV is a PV of the EBS CSI driver naming volume id.
func ebsPV(id, ns, claim string, policy corev1.PersistentVolumeReclaimPolicy, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("500Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              "gp3",
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: ebsvolume.CSIDriver, FSType: "ext4", VolumeHandle: id}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: phase},
	}
}
