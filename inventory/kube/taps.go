package kube

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"reclaim.dev/reclaim/inventory"
)

// Tap is a kind's own read of one resource in every cluster: one paginated
// pass through the dynamic client, with its own completeness. A kind that
// needs a resource the collector does not read registers a Tap (Options.Taps)
// instead of a case in Collect; what it read is in ClusterRefs.Taps under
// Name, and a pass that failed holds only what relies on it (the engine's
// source key TapKey), not the whole cluster.
type Tap struct {
	// Name names the tap ("configmaps"); unique among the run's taps.
	Name string
	// Resource is what it lists, in every namespace.
	Resource schema.GroupVersionResource
	// New makes an empty sink for one cluster's pass. A pass that starts
	// over (an expired continue token) gets a new one.
	New func(cluster string) TapSink
}

// TapSink takes one pass's objects.
type TapSink interface {
	// Add records one object; an error ends the pass as incomplete.
	Add(obj *unstructured.Unstructured) error
	// Result is what the pass made of them (ClusterRefs.Taps[...].Data).
	Result() any
}

// runTaps starts each tap's pass; the returned func waits for them and
// records what each read.
func runTaps(l lister, cluster string, dyn dynamic.Interface, taps []Tap, wg *sync.WaitGroup) func(out *inventory.ClusterRefs) {
	if len(taps) == 0 {
		return func(*inventory.ClusterRefs) {}
	}
	res := make([]inventory.Tapped, len(taps))
	for i, t := range taps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = tap(l, cluster, dyn, t)
		}()
	}
	return func(out *inventory.ClusterRefs) {
		out.Taps = make(map[string]inventory.Tapped, len(taps))
		for i, t := range taps {
			out.Taps[t.Name] = res[i]
		}
	}
}

func tap(l lister, cluster string, dyn dynamic.Interface, t Tap) inventory.Tapped {
	res := t.Resource.Resource
	if t.Resource.Group != "" {
		res += "." + t.Resource.Group
	}
	if dyn == nil {
		return inventory.Tapped{Problem: l.problem(res, errNoDynamic)}
	}
	sink, n := t.New(cluster), 0
	var version string
	list := onRestart(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := dyn.Resource(t.Resource).Namespace(metav1.NamespaceAll).List(ctx, o)
		if err == nil {
			version = obj.GetResourceVersion()
		}
		return obj, err
	}, func() { sink, n = t.New(cluster), 0 })
	err := l.each(res, list, func(obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("unexpected %T in %s list", obj, res)
		}
		n++
		return sink.Add(u)
	})
	out := inventory.Tapped{Complete: err == nil, Items: n, Version: version, Data: sink.Result()}
	if err != nil {
		out.Problem = l.problem(res, err)
	}
	return out
}
