package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"reclaim.dev/reclaim/base/perms"
)

// Watched are the resources whose changes a watching agent (reclaim daemon
// --agent) reads its cluster again for: what the collector reads (volumes,
// pods, nodes, namespaces' owner labels, every pod template an image could
// be pulled by, rollback targets included). Their informers keep metadata
// only (a few hundred bytes an object): the content is read by the
// collector's own pass, not by the watch.
var Watched = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "persistentvolumes"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "nodes"},
	{Version: "v1", Resource: "namespaces"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
}

// WatchPermissions are what Watch needs on top of the collector's reads:
// list and watch on each of Watched.
var WatchPermissions = func() perms.Set {
	var rules []perms.Rule
	for _, gvr := range Watched {
		rules = append(rules, perms.Rule{Group: gvr.Group, Resource: gvr.Resource, Verbs: []string{"list", "watch"}})
	}
	return perms.Set{Read: perms.Grants{RBAC: rules}}
}()

// WatchSyncTimeout is how long Watch waits for its informers' first lists.
const WatchSyncTimeout = 2 * time.Minute

// Watch calls changed whenever an object of Watched is added, changed
// (a new resourceVersion: a Deployment's template, a PV's claim) or
// deleted in the cluster rc reaches, until ctx ends. The objects its
// first lists show call nothing: the pass a watch starts with reads them.
// It returns an error if the informers could not list and watch within
// WatchSyncTimeout (the grant is list and watch on each of Watched), else
// ctx's when it ends.
func Watch(ctx context.Context, rc *rest.Config, changed func()) error {
	mc, err := metadata.NewForConfig(rc)
	if err != nil {
		return err
	}
	f := metadatainformer.NewSharedInformerFactory(mc, 0)
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				changed()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*metav1.PartialObjectMetadata)
			n, ok2 := newObj.(*metav1.PartialObjectMetadata)
			if ok1 && ok2 && o.ResourceVersion == n.ResourceVersion {
				return // a resync, not a change
			}
			changed()
		},
		DeleteFunc: func(any) { changed() },
	}
	for _, gvr := range Watched {
		if _, err := f.ForResource(gvr).Informer().AddEventHandler(handler); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	f.Start(wctx.Done())
	defer func() { cancel(); f.Shutdown() }()
	sctx, cancelSync := context.WithTimeout(wctx, WatchSyncTimeout)
	synced := f.WaitForCacheSync(sctx.Done())
	cancelSync()
	var unsynced []string
	for gvr, ok := range synced {
		if !ok {
			unsynced = append(unsynced, gvr.GroupResource().String())
		}
	}
	if len(unsynced) > 0 && ctx.Err() == nil {
		return fmt.Errorf("could not list and watch %s within %s: grant reclaim's agent list and watch on them (deploy/overlays/agent)", strings.Join(unsynced, ", "), WatchSyncTimeout)
	}
	<-ctx.Done()
	return ctx.Err()
}
