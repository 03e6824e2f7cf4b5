package app

import (
	"errors"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/engine"
)

// wiring is what a runner takes from the config, derived once before any
// client is opened: New opens the clients from it, and the passes read it,
// so no part of the config is read twice for them.
type wiring struct {
	// on are the kinds the config turns on (On).
	on Modules
	// routes are notify's routes for the engine (Routes).
	routes []engine.Route
	// targets are the configured clusters, read for the kinds that are on;
	// an agent's one cluster is read for every kind (the deleters' kinds
	// find what they rely on in its record).
	targets []kube.Target
	// kube is what every cluster's collection reads (kubeOptions); an
	// agent's taps are every registered kind's.
	kube kube.Options
	// recordCfg is fleet.records (nil without it), bounds what reading
	// its records may take of the memory, and records how a deleter reads
	// them: nil for an agent, which publishes.
	recordCfg *config.Records
	bounds    records.Bounds
	records   *records.Reader
}

// wire derives the run's wiring from cfg, and refuses a config its role
// (agent, or a deleter; outside is reclaim agent --outside-cluster) cannot
// run with.
func wire(cfg *config.Config, agent, outside bool) (wiring, error) {
	w := wiring{on: On(cfg), recordCfg: cfg.Fleet.Records}
	routes, err := Routes(cfg)
	if err != nil {
		return w, err
	}
	w.routes = routes
	if w.recordCfg == nil && agent {
		return w, errors.New("reclaim agent publishes to fleet.records: add the section (bucket, account, region) to the agent's config")
	}
	if w.recordCfg != nil {
		if err := checkRole(cfg, agent, outside); err != nil {
			return w, err
		}
	}
	w.targets = targets(cfg, w.on)
	w.kube = kubeOptions(cfg, w.on)
	if w.recordCfg != nil {
		if w.bounds, err = records.BoundsFor(w.recordCfg, records.MemoryTarget()); err != nil {
			return w, err
		}
	}
	switch {
	case agent:
		// Every read and tap, whatever the agent's own kinds need.
		w.targets[0].Images, w.targets[0].Workloads = true, true
		w.kube.Taps = AllTaps(cfg)
	case w.recordCfg != nil:
		// Every registered kind's evidence, on or not: a cloud read a
		// kind that is on made (gce, for k8s-pvc) shows what it shows.
		w.records = &records.Reader{Config: w.recordCfg, Taps: records.Decoders(w.kube.Taps), Bounds: w.bounds,
			Evidence: Modules(Registered).Evidence}
	}
	return w, nil
}
