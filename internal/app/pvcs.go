package app

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile"
)

// KubePVCs deletes PVCs through each cluster's API. Kubernetes' own
// pvc-protection finalizer keeps a PVC that a pod still uses until the pod is
// gone, which backs up the plan's "no running pod" evidence.
type KubePVCs struct {
	Targets      []kube.Target
	ProtectLabel string
	// Clients overrides how a cluster's client is made (tests, demo).
	Clients map[string]kubernetes.Interface

	mu sync.Mutex
}

func (k *KubePVCs) client(cluster string) (kubernetes.Interface, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.Clients[cluster]; ok {
		return c, nil
	}
	for _, t := range k.Targets {
		if t.Name == cluster {
			cs, _, err := kube.Clients(t)
			if err != nil {
				return nil, err
			}
			if k.Clients == nil {
				k.Clients = map[string]kubernetes.Interface{}
			}
			k.Clients[cluster] = cs
			return cs, nil
		}
	}
	return nil, fmt.Errorf("cluster %s is not configured", cluster)
}

// DeletePVC re-reads the PVC and deletes it only if it is the same object (UID)
// and not protected; NotFound is success.
func (k *KubePVCs) DeletePVC(ctx context.Context, cluster, namespace, name, uid string) error {
	cs, err := k.client(cluster)
	if err != nil {
		return err
	}
	pvcs := cs.CoreV1().PersistentVolumeClaims(namespace)
	cur, err := pvcs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("pvc %s/%s in %s: %w", namespace, name, cluster, inventory.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("re-read pvc %s/%s in %s: %w", namespace, name, cluster, err)
	}
	if string(cur.UID) != uid {
		return &reconcile.ChangedError{Reason: fmt.Sprintf("pvc %s/%s in %s was recreated since it was planned (uid %s, planned %s): not deleted", namespace, name, cluster, cur.UID, uid)}
	}
	if k.ProtectLabel != "" && cur.Labels[k.ProtectLabel] == "true" {
		return &reconcile.ChangedError{Reason: fmt.Sprintf("pvc %s/%s in %s became protected since it was planned: not deleted", namespace, name, cluster)}
	}
	u := types.UID(uid)
	err = pvcs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}})
	if apierrors.IsConflict(err) {
		return &reconcile.ChangedError{Reason: fmt.Sprintf("pvc %s/%s in %s was recreated since it was re-read (%v): not deleted", namespace, name, cluster, err)}
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("pvc %s/%s in %s: %w", namespace, name, cluster, inventory.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete pvc %s/%s in %s: %w", namespace, name, cluster, err)
	}
	return nil
}
