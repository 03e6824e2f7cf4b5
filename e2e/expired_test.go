package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"reclaim.dev/reclaim/inventory/kube"
)

// etcdCompact writes a key (so the revision moves past every continue token
// handed out so far) and compacts etcd at the new revision, through etcd's
// JSON gateway. A continue token from before is then answered 410 Expired.
func etcdCompact(t *testing.T, etcdURL string) {
	t.Helper()
	post := func(path string, body any) map[string]any {
		b, _ := json.Marshal(body)
		resp, err := http.Post(etcdURL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("etcd %s: %s %s", path, resp.Status, raw)
		}
		var out map[string]any
		json.Unmarshal(raw, &out)
		return out
	}
	put := post("/v3/kv/put", map[string]string{"key": "cmVjbGFpbS1lMmU=", "value": "eA=="}) // base64
	rev := put["header"].(map[string]any)["revision"]
	post("/v3/kv/compaction", map[string]any{"revision": rev, "physical": true})
}

// An expired continue token from a real apiserver is re-listed, and the
// cluster's result is still complete with every PV seen once.
func TestExpiredContinueTokenIsRelisted(t *testing.T) {
	ctx := context.Background()
	const n = 12
	run := worlds.Add(1)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("pv-expired-%d-%02d", run, i)
		_, err := prodB.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "pd.csi.storage.gke.io", VolumeHandle: "projects/e2e-project/zones/asia-northeast1-a/disks/" + name}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = prodB.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}

	// Compact etcd right after the first page of persistentvolumes.
	var once sync.Once
	var expired bool
	var mu sync.Mutex
	cfg := rest.CopyConfig(prodB.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && strings.HasSuffix(r.URL.Path, "/persistentvolumes") {
				if r.URL.Query().Get("continue") == "" && r.URL.Query().Get("limit") != "" {
					once.Do(func() { etcdCompact(t, prodB.EtcdURL) })
				}
				if resp.StatusCode == http.StatusGone {
					mu.Lock()
					expired = true
					mu.Unlock()
				}
			}
			return resp, err
		})
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	refs := kube.Collect(ctx, "prod-b", cs, dyn, kube.Options{PageSize: 5, Timeout: 30 * time.Second})
	mu.Lock()
	sawGone := expired
	mu.Unlock()
	if !sawGone {
		t.Fatal("the apiserver never answered 410: the test did not exercise the re-list")
	}
	if !refs.Complete {
		t.Fatalf("incomplete after a re-list: %v", refs.Problems)
	}
	seen := map[string]int{}
	for _, r := range refs.PVs {
		if strings.HasPrefix(r.PV, fmt.Sprintf("pv-expired-%d-", run)) {
			seen[r.PV]++
		}
	}
	if len(seen) != n {
		t.Fatalf("saw %d of %d PVs after the re-list", len(seen), n)
	}
	for pv, c := range seen {
		if c != 1 {
			t.Fatalf("%s seen %d times", pv, c)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
