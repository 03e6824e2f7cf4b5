package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/inventory"
)

func csiPV(name, driver, handle string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle},
			},
		},
	}
}

func inTreePV(name, pd string, labels map[string]string, affinityTerms ...corev1.NodeSelectorTerm) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: pd},
			},
		},
	}
	if len(affinityTerms) > 0 {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: affinityTerms}}
	}
	return pv
}

func zoneTerm(key string, zones ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: zones}}}
}

func TestPVDisk(t *testing.T) {
	U := inventory.Unspecified
	tests := []struct {
		name    string
		pv      *corev1.PersistentVolume
		want    inventory.DiskKey
		ok      bool
		wantErr string
	}{
		{"csi zonal", csiPV("a", PDCSIDriver, "projects/p1/zones/us-east1-b/disks/pvc-1"),
			inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "pvc-1"}, true, ""},
		{"csi regional", csiPV("a", PDCSIDriver, "projects/p1/regions/us-central1/disks/pvc-2"),
			inventory.DiskKey{Project: "p1", Region: "us-central1", Name: "pvc-2"}, true, ""},
		{"csi compute URL prefix", csiPV("a", PDCSIDriver, "https://www.googleapis.com/compute/v1/projects/p1/zones/us-east1-b/disks/d"),
			inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "d"}, true, ""},
		{"csi UNSPECIFIED project", csiPV("a", PDCSIDriver, "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
			inventory.DiskKey{Project: U, Zone: "us-east1-a", Name: "pd-name"}, true, ""},
		{"csi UNSPECIFIED project and zone", csiPV("a", PDCSIDriver, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name"),
			inventory.DiskKey{Project: U, Zone: U, Name: "pd-name"}, true, ""},
		{"csi UNSPECIFIED regional", csiPV("a", PDCSIDriver, "projects/UNSPECIFIED/regions/us-central1/disks/pd-name"),
			inventory.DiskKey{Project: U, Region: "us-central1", Name: "pd-name"}, true, ""},
		{"csi malformed", csiPV("a", PDCSIDriver, "pd-name"), inventory.DiskKey{}, true,
			`unparseable spec.csi.volumeHandle: disk handle "pd-name"`},
		{"csi malformed scope", csiPV("a", PDCSIDriver, "projects/p/locations/x/disks/d"), inventory.DiskKey{}, true,
			`want zones or regions`},
		{"other csi driver ignored", csiPV("a", "ebs.csi.aws.com", "vol-123"), inventory.DiskKey{}, false, ""},
		{"filestore csi ignored", csiPV("a", "filestore.csi.storage.gke.io", "projects/p/zones/z/disks/d"), inventory.DiskKey{}, false, ""},
		{"nfs ignored", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}}},
			inventory.DiskKey{}, false, ""},
		{"in-tree topology label", inTreePV("a", "d1", map[string]string{"topology.kubernetes.io/zone": "europe-west1-c"}),
			inventory.DiskKey{Project: U, Zone: "europe-west1-c", Name: "d1"}, true, ""},
		{"in-tree beta label", inTreePV("a", "d1", map[string]string{"failure-domain.beta.kubernetes.io/zone": "europe-west1-d"}),
			inventory.DiskKey{Project: U, Zone: "europe-west1-d", Name: "d1"}, true, ""},
		{"in-tree GA label wins over beta", inTreePV("a", "d1", map[string]string{"topology.kubernetes.io/zone": "europe-west1-c", "failure-domain.beta.kubernetes.io/zone": "europe-west1-d"}),
			inventory.DiskKey{Project: U, Zone: "europe-west1-c", Name: "d1"}, true, ""},
		{"in-tree multi-zone label is regional", inTreePV("a", "my-data-disk", map[string]string{"failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-b"}),
			inventory.DiskKey{Project: U, Region: "us-central1", Name: "my-data-disk"}, true, ""},
		{"in-tree node affinity zone", inTreePV("a", "d2", nil, zoneTerm("topology.gke.io/zone", "asia-northeast1-a")),
			inventory.DiskKey{Project: U, Zone: "asia-northeast1-a", Name: "d2"}, true, ""},
		{"in-tree node affinity two zones one region", inTreePV("a", "d2", nil, zoneTerm("topology.kubernetes.io/zone", "asia-northeast1-a"), zoneTerm("failure-domain.beta.kubernetes.io/zone", "asia-northeast1-b")),
			inventory.DiskKey{Project: U, Region: "asia-northeast1", Name: "d2"}, true, ""},
		{"in-tree node affinity zones in two regions", inTreePV("a", "d2", nil, zoneTerm("topology.gke.io/zone", "asia-northeast1-a", "us-east1-b")),
			inventory.DiskKey{Project: U, Zone: U, Name: "d2"}, true, ""},
		{"in-tree node affinity other key ignored", inTreePV("a", "d2", nil, zoneTerm("kubernetes.io/hostname", "node-1")),
			inventory.DiskKey{Project: U, Zone: U, Name: "d2"}, true, ""},
		{"in-tree no zone info", inTreePV("a", "d3", nil),
			inventory.DiskKey{Project: U, Zone: U, Name: "d3"}, true, ""},
		{"in-tree empty pdName", inTreePV("a", "", nil), inventory.DiskKey{}, true, "pdName is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := PVDisk(tc.pv)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected err %v", err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The regional PV example from the Kubernetes website, verbatim.
const websiteRegionalPV = `
apiVersion: v1
kind: PersistentVolume
metadata:
  name: test-volume
  labels:
    failure-domain.beta.kubernetes.io/zone: us-central1-a__us-central1-b
spec:
  capacity:
    storage: 400Gi
  accessModes:
  - ReadWriteOnce
  gcePersistentDisk:
    pdName: my-data-disk
    fsType: ext4
`

func TestPVDiskWebsiteSample(t *testing.T) {
	var pv corev1.PersistentVolume
	if err := yaml.Unmarshal([]byte(websiteRegionalPV), &pv); err != nil {
		t.Fatal(err)
	}
	got, ok, err := PVDisk(&pv)
	want := inventory.DiskKey{Project: inventory.Unspecified, Region: "us-central1", Name: "my-data-disk"}
	if !ok || err != nil || got != want {
		t.Fatalf("got %+v %v %v, want %+v", got, ok, err, want)
	}
	if g := gib(storage(pv.Spec.Capacity)); g != 400 {
		t.Fatalf("capacity %d GiB, want 400", g)
	}
}

func TestGiB(t *testing.T) {
	for in, want := range map[string]int64{"1Gi": 1, "400Gi": 400, "10G": 10, "1": 1, "1536Mi": 2, "0": 0, "1Ti": 1024} {
		q := resource.MustParse(in)
		if got := gib(&q); got != want {
			t.Errorf("gib(%s) = %d, want %d", in, got, want)
		}
	}
	if gib(nil) != 0 {
		t.Error("gib(nil) != 0")
	}
}
