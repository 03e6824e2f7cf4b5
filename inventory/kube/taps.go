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
// pass through the dynamic client (shared by the taps on that resource),
// with its own completeness. A kind that
// needs a resource the collector does not read registers a Tap (Options.Taps)
// instead of a case in Collect; what it read is in ClusterRefs.Taps under
// Name, and a pass that failed holds only what relies on it (the engine's
// source key TapKey), not the whole cluster.
type Tap struct {
	// Name names the tap ("configmaps"); unique among the run's taps.
	Name string
	// Resource is what it lists, in every namespace.
	Resource schema.GroupVersionResource
	// Optional: a cluster may not serve the resource (its CRD is not
	// installed); such a cluster has none, and the pass is complete and
	// empty. Otherwise "not served" is a failed pass.
	Optional bool
	// New makes an empty sink for one cluster's pass. A pass that starts
	// over (an expired continue token) gets a new one.
	New func(cluster string) TapSink
	// Link, if set, applies what the pass read to the cluster's collected
	// references once they are all there (complete or not: Link sees the
	// pass's completeness, and the engine holds what relies on the tap
	// when it is incomplete).
	Link func(out *inventory.ClusterRefs, read inventory.Tapped)
	// Decode, if set, reads what the sink made back from a cluster's
	// published record (JSON of its Result). A tap without it is not read
	// from records: what relies on it holds, as if the pass never ran.
	Decode func(data []byte) (any, error)
}

// linkTaps runs each tap's Link on what its pass read.
func linkTaps(out *inventory.ClusterRefs, taps []Tap) {
	for _, t := range taps {
		if t.Link != nil {
			t.Link(out, out.Taps[t.Name])
		}
	}
}

// TapSink takes one pass's objects.
type TapSink interface {
	// Add records one object; an error ends the pass as incomplete (for
	// every tap sharing it).
	Add(obj *unstructured.Unstructured) error
	// Result is what the pass made of them (ClusterRefs.Taps[...].Data).
	Result() any
}

// runTaps starts one pass per resource the taps read (taps on the same
// resource share it, each with its own sink); the returned func waits for
// them and records what each tap read.
func runTaps(l lister, cluster string, dyn dynamic.Interface, taps []Tap, wg *sync.WaitGroup) func(out *inventory.ClusterRefs) {
	if len(taps) == 0 {
		return func(*inventory.ClusterRefs) {}
	}
	var groups [][]int // tap indexes by resource, in first-seen order
	at := map[schema.GroupVersionResource]int{}
	for i, t := range taps {
		g, ok := at[t.Resource]
		if !ok {
			g = len(groups)
			at[t.Resource] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	res := make([]inventory.Tapped, len(taps))
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pass(l, cluster, dyn, taps, g, res)
		}()
	}
	return func(out *inventory.ClusterRefs) {
		out.Taps = make(map[string]inventory.Tapped, len(taps))
		for i, t := range taps {
			out.Taps[t.Name] = res[i]
		}
	}
}

// pass lists one resource once for the taps at idx, into res.
func pass(l lister, cluster string, dyn dynamic.Interface, taps []Tap, idx []int, res []inventory.Tapped) {
	gvr := taps[idx[0]].Resource
	name := gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	if dyn == nil {
		for _, i := range idx {
			res[i] = inventory.Tapped{Problem: l.problem(name, errNoDynamic)}
		}
		return
	}
	sinks := make([]TapSink, len(idx))
	n := 0
	fresh := func() {
		for j, i := range idx {
			sinks[j] = taps[i].New(cluster)
		}
		n = 0
	}
	fresh()
	var version string
	list := onRestart(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, o)
		if err == nil {
			version = obj.GetResourceVersion()
		}
		return obj, err
	}, fresh)
	err := l.each(name, list, func(obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("unexpected %T in %s list", obj, name)
		}
		n++
		for _, s := range sinks {
			if err := s.Add(u); err != nil {
				return err
			}
		}
		return nil
	})
	for j, i := range idx {
		t := &taps[i]
		if err != nil && t.Optional && notServed(err) {
			// Not installed in this cluster: it has none of them.
			res[i] = inventory.Tapped{Complete: true, Data: t.New(cluster).Result()}
			continue
		}
		res[i] = inventory.Tapped{Complete: err == nil, Items: n, Version: version, Data: sinks[j].Result()}
		if err != nil {
			res[i].Problem = l.problem(name, err)
		}
	}
}
