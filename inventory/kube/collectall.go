package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// CollectAll builds clients for every target and collects them, at most
// concurrency at a time (< 1 means 1). It returns one result per target, in
// input order. A target whose clients cannot be built, or whose collection
// panics, is an incomplete result whose Problems say why. Per-target Timeout,
// PageSize, Projects and Accounts override opt; a target's Images turns image
// collection on for it.
func CollectAll(ctx context.Context, targets []Target, opt Options, concurrency int) []inventory.ClusterRefs {
	if concurrency < 1 {
		concurrency = 1
	}
	out := make([]inventory.ClusterRefs, len(targets))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = collectTarget(ctx, t, opt)
		}()
	}
	wg.Wait()
	return out
}

func collectTarget(ctx context.Context, t Target, opt Options) (res inventory.ClusterRefs) {
	o := opt
	if t.Timeout > 0 {
		o.Timeout = t.Timeout
	}
	if t.PageSize > 0 {
		o.PageSize = t.PageSize
	}
	if len(t.Projects) > 0 {
		o.Projects = t.Projects
	}
	if len(t.Accounts) > 0 {
		o.Accounts = t.Accounts
	}
	if t.Images {
		o.Images = true
	}
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			res = inventory.ClusterRefs{
				Name:     t.Name,
				Projects: append([]string(nil), o.Projects...),
				Accounts: append([]string(nil), o.Accounts...),
				Problems: []string{fmt.Sprintf("cluster %s: internal error while collecting (a reclaim bug, please report): %v", t.Name, r)},
				Duration: time.Since(start),
			}
		}
	}()
	cs, dyn, err := Clients(t)
	if err != nil {
		return inventory.ClusterRefs{
			Name:     t.Name,
			Projects: append([]string(nil), o.Projects...),
			Accounts: append([]string(nil), o.Accounts...),
			Problems: []string{err.Error()},
			Duration: time.Since(start),
		}
	}
	return Collect(ctx, t.Name, cs, dyn, o)
}
