package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/inventory"
)

// CollectAll builds clients for every target and collects them, at most
// concurrency at a time (< 1 means 1). It returns one result per target, in
// input order. A target whose clients cannot be built, or whose collection
// panics, is an incomplete result whose Problems say why. Per-target Timeout,
// PageSize, Projects, Accounts and Subnets override opt; a target's Images
// and Workloads turn image and workload collection on for it.
func CollectAll(ctx context.Context, targets []Target, opt Options, concurrency int) []inventory.ClusterRefs {
	return NewPool(targets).Collect(ctx, opt, concurrency)
}

// Pool builds each target's clients once, on first use, and hands out the
// same clients after: a daemon's passes share connections and rate limiters.
// A target whose clients could not be built is tried again on the next use.
type Pool struct {
	targets []Target
	mu      sync.Mutex
	built   map[string]clientPair
}

type clientPair struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// NewPool returns a pool for the targets.
func NewPool(targets []Target) *Pool {
	return &Pool{targets: append([]Target(nil), targets...), built: map[string]clientPair{}}
}

// Targets are the pool's targets.
func (p *Pool) Targets() []Target { return p.targets }

// Clients returns the named target's clients, building them the first time.
func (p *Pool) Clients(name string) (kubernetes.Interface, dynamic.Interface, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.built[name]; ok {
		return c.cs, c.dyn, nil
	}
	for _, t := range p.targets {
		if t.Name == name {
			cs, dyn, err := Clients(t)
			if err != nil {
				return nil, nil, err
			}
			p.built[name] = clientPair{cs, dyn}
			return cs, dyn, nil
		}
	}
	return nil, nil, fmt.Errorf("cluster %s is not configured", name)
}

// Add adds a target (a discovered cluster) or replaces the one of the same
// name; a target whose endpoint or CA changed gets new clients.
func (p *Pool) Add(t Target) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, old := range p.targets {
		if old.Name == t.Name {
			if old.Endpoint != t.Endpoint || string(old.CAData) != string(t.CAData) || old.Discovered != t.Discovered {
				delete(p.built, t.Name)
			}
			p.targets[i] = t
			return
		}
	}
	p.targets = append(p.targets, t)
}

// CollectTargets collects the given targets (added to the pool first), at
// most concurrency at a time. One result per target, in order.
func (p *Pool) CollectTargets(ctx context.Context, targets []Target, opt Options, concurrency int) []inventory.ClusterRefs {
	for _, t := range targets {
		p.Add(t)
	}
	return p.collect(ctx, targets, opt, concurrency)
}

// Client returns the named target's typed client.
func (p *Pool) Client(name string) (kubernetes.Interface, error) {
	cs, _, err := p.Clients(name)
	return cs, err
}

// Collect collects every target, at most concurrency at a time, with the
// pool's clients. One result per target, in order.
func (p *Pool) Collect(ctx context.Context, opt Options, concurrency int) []inventory.ClusterRefs {
	p.mu.Lock()
	targets := append([]Target(nil), p.targets...)
	p.mu.Unlock()
	return p.collect(ctx, targets, opt, concurrency)
}

func (p *Pool) collect(ctx context.Context, targets []Target, opt Options, concurrency int) []inventory.ClusterRefs {
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
			out[i] = p.collectTarget(ctx, t, opt)
		}()
	}
	wg.Wait()
	return out
}

func (p *Pool) collectTarget(ctx context.Context, t Target, opt Options) (res inventory.ClusterRefs) {
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
	if len(t.Subnets) > 0 {
		o.Subnets = t.Subnets
	}
	if t.Images {
		o.Images = true
	}
	if t.Workloads {
		o.Workloads = true
	}
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			res = inventory.ClusterRefs{
				Name:     t.Name,
				Projects: append([]string(nil), o.Projects...),
				Accounts: append([]string(nil), o.Accounts...),
				Subnets:  append([]string(nil), o.Subnets...),
				Problems: []string{fmt.Sprintf("cluster %s: internal error while collecting (a reclaim bug, please report): %v", t.Name, r)},
				Duration: time.Since(start),
			}
		}
	}()
	cs, dyn, err := p.Clients(t.Name)
	if err != nil {
		return inventory.ClusterRefs{
			Name:     t.Name,
			Projects: append([]string(nil), o.Projects...),
			Accounts: append([]string(nil), o.Accounts...),
			Subnets:  append([]string(nil), o.Subnets...),
			Problems: []string{err.Error()},
			Duration: time.Since(start),
		}
	}
	return Collect(ctx, t.Name, cs, dyn, o)
}
