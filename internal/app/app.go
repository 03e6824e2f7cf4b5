// Package app wires one reclaim run: collect, plan, apply, report. The CLI,
// the demo and the end-to-end tests all go through Run.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/config"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile"
)

// Deps are the parts of a run. Anything left nil is built from the config.
type Deps struct {
	Disks gce.Provider
	// Images lists the ECR registries and deletes images; nil with an ecr
	// section builds one client per registry from the config.
	Images ImageProvider
	// ImageSources reads the manifest directories; nil reads ecr.manifests.dirs.
	ImageSources func(ctx context.Context) []inventory.ImageSource
	Clusters     func(ctx context.Context) []inventory.ClusterRefs
	PVCs         reconcile.PVCAPI
	Store        reconcile.Store
	Audit        *reconcile.AuditLog
	Log          *zap.Logger
	Now          func() time.Time
}

// ImageProvider is what a run needs from ECR: list every registry, and the
// applier's re-read and delete.
type ImageProvider interface {
	List(ctx context.Context) []inventory.RegistryListing
	reconcile.ImageAPI
}

// Options are the run's switches.
type Options struct {
	// Apply deletes what the plan marks for deletion. Without it nothing is deleted.
	Apply bool
}

// Run performs one pass. The error is for a run that could not happen; a run
// with incomplete sources or failed deletes returns a report whose ExitCode says so.
func Run(ctx context.Context, cfg *config.Config, d Deps, opt Options) (*notify.Report, error) {
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	if d.Disks == nil && cfg.GCE != nil {
		c, err := gce.New(ctx, gce.Options{Endpoint: cfg.GCE.Endpoint, WithoutAuthentication: cfg.GCE.WithoutAuthentication,
			CredentialsFile: cfg.GCE.CredentialsFile, PageSize: int(cfg.GCE.PageSize), UserAgent: "reclaim/" + Version})
		if err != nil {
			return nil, fmt.Errorf("gce client: %w", err)
		}
		closers = append(closers, func() { c.Close() })
		d.Disks = c
	}
	if d.Images == nil && cfg.ECR != nil {
		f, err := ecr.NewFleet(ctx, RegistryOptions(cfg))
		if err != nil {
			return nil, fmt.Errorf("ecr clients: %w", err)
		}
		d.Images = f
	}
	if d.ImageSources == nil && cfg.ECR != nil && len(cfg.ECR.Manifests.Dirs) > 0 {
		d.ImageSources = ManifestSources(cfg)
	}
	if d.Clusters == nil || d.PVCs == nil {
		targets := Targets(cfg)
		if d.Clusters == nil {
			d.Clusters = func(ctx context.Context) []inventory.ClusterRefs {
				return kube.CollectAll(ctx, targets, kube.Options{ProtectLabel: cfg.Kubernetes.ProtectLabel}, 8)
			}
		}
		if d.PVCs == nil {
			d.PVCs = &KubePVCs{Targets: targets, ProtectLabel: cfg.Kubernetes.ProtectLabel}
		}
	}
	if d.Store == nil {
		s, err := StoreFrom(cfg)
		if err != nil {
			return nil, err
		}
		d.Store = s
	}
	if d.Audit == nil {
		a, err := reconcile.OpenAudit(cfg.Audit.File)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { a.Close() })
		d.Audit = a
	}

	prev, err := d.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	pol := PolicyFrom(cfg)
	co := inventory.CollectOptions{Clusters: d.Clusters, Now: d.Now}
	if cfg.GCE != nil {
		co.Disks, co.Projects, co.Regions = d.Disks, cfg.GCE.Projects, cfg.GCE.Regions
		co.QuotaMetrics, co.Concurrency = cfg.GCE.QuotaMetrics, cfg.GCE.Concurrency
	}
	if cfg.ECR != nil {
		co.Registries, co.ImageSources = d.Images.List, d.ImageSources
	}
	start := d.Now()
	snap := inventory.Collect(ctx, co)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("run cancelled while collecting: %w", ctx.Err())
	}
	plan := reconcile.Build(snap, pol, prev, d.Now())
	d.Log.Info("planned", zap.Bool("dry_run", !opt.Apply), zap.Duration("collect", d.Now().Sub(start)),
		zap.Int("delete", plan.Count(reconcile.KindDisk, reconcile.Delete)+plan.Count(reconcile.KindPVC, reconcile.Delete)+plan.Count(reconcile.KindImage, reconcile.Delete)),
		zap.Bool("incomplete", plan.Incomplete), zap.Bool("breaker", plan.BreakerTripped))

	ap := &reconcile.Applier{Disks: d.Disks, PVCs: d.PVCs, Images: d.Images, Store: d.Store, Audit: d.Audit, Log: d.Log, Policy: pol,
		SnapshotLabel: cfg.Disks.SnapshotLabel, Now: d.Now, RunID: runID(d.Now()), MaxConsecutiveFailures: 5}
	out, err := ap.Finish(ctx, plan, opt.Apply)
	if err != nil {
		return nil, err
	}
	var o *reconcile.Outcome
	if opt.Apply {
		o = out
	}
	rep := notify.New(plan, o, opt.Apply)
	rep.LastSuccess = plan.State.LastSuccess
	if rep.ExitCode == notify.ExitOK {
		rep.LastSuccess = d.Now()
		if err := markSuccess(ctx, d.Store, rep.LastSuccess); err != nil {
			d.Log.Warn("could not record the successful run in the state store", zap.Error(err))
		}
	}
	return rep, nil
}

// PolicyFrom turns the validated config into the planner's policy.
func PolicyFrom(cfg *config.Config) reconcile.Policy {
	dk := cfg.Disks
	p := reconcile.Policy{
		MinAge: dk.MinAge.Std(), Grace: dk.Grace.Std(), MinDetached: dk.MinDetached.Std(),
		ProtectLabel: dk.ProtectLabel, OwnerLabelKeys: dk.Ownership.LabelKeys, OwnerDescriptionContains: dk.Ownership.DescriptionContains,
		SnapshotBeforeDelete: dk.SnapshotBeforeDelete, DeleteWorkflowPVCs: dk.DeleteWorkflowPVCs,
		MaxDeletes: dk.MaxDeletesPerRun, MaxDeletePercent: dk.MaxDeletePercent.Fraction(),
		MaxDeleteGB: float64(dk.MaxDeleteSizePerRun) / 1e9, BreakerCandidates: dk.BreakerCandidates,
	}
	if cfg.GCE != nil {
		p.Regions, p.Zones = cfg.GCE.Regions, cfg.GCE.Zones
		p.QuotaMetrics, p.HeadroomWarning = cfg.GCE.QuotaMetrics, cfg.GCE.HeadroomWarning.Fraction()
	}
	p.Images = ImagePolicyFrom(cfg)
	return p
}

// Targets lists the clusters of the config for the collector.
func Targets(cfg *config.Config) []kube.Target {
	out := make([]kube.Target, 0, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		out = append(out, kube.Target{Name: c.Name, Kubeconfig: c.Kubeconfig, Context: c.Context, InCluster: c.InCluster,
			Projects: c.GCEProjects, Accounts: c.AWSAccounts, Images: cfg.ECR != nil, Timeout: c.Timeout.Std(), QPS: c.QPS, Burst: c.Burst, PageSize: c.PageSize})
	}
	return out
}

// StoreFrom opens the state store the config names.
func StoreFrom(cfg *config.Config) (reconcile.Store, error) {
	if cm := cfg.State.ConfigMap; cm != nil {
		rc, err := kube.RESTConfig(kube.Target{Name: "state", Kubeconfig: cm.Kubeconfig, Context: cm.Context, InCluster: cm.Kubeconfig == ""})
		if err != nil {
			return nil, fmt.Errorf("state.configMap: %w", err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("state.configMap: %w", err)
		}
		return &reconcile.ConfigMapStore{Client: cs, Namespace: cm.Namespace, Name: cm.Name}, nil
	}
	return reconcile.FileStore{Path: cfg.State.File}, nil
}

func markSuccess(ctx context.Context, s reconcile.Store, t time.Time) error {
	st, err := s.Load(ctx)
	if err != nil {
		return err
	}
	st.LastSuccess = t
	return s.Save(ctx, st)
}

func runID(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// Version is set at build time with -ldflags "-X reclaim.dev/reclaim/internal/app.Version=...".
var Version = "dev"
