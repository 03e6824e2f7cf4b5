package demo

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/gcesnapshot"
	"reclaim.dev/reclaim/reconcile/state"
)

// Run seeds the fleet and runs reclaim once, dry-run, through the same code
// as `reclaim run`: the real compute client over HTTP to the GCE fake, and the
// real cluster collector over simulated API clients.
func Run(ctx context.Context, narration io.Writer, log *zap.Logger) (*report.Report, error) {
	return RunAt(ctx, narration, log, time.Now())
}

// RunAt is Run with the fleet's clock fixed at now (golden files of the
// demo's report).
func RunAt(ctx context.Context, narration io.Writer, log *zap.Logger, now time.Time) (*report.Report, error) {
	cfg, deps, done, err := Start(ctx, narration, log, now)
	if err != nil {
		return nil, err
	}
	defer done()
	return app.Run(ctx, cfg, deps, app.Options{})
}

// Start starts the simulated fleet (its fakes, with the state of earlier
// runs in a memory store) and returns the demo's config and the
// dependencies a run needs; done stops the fakes. tweak, if any, changes
// the config before the clients are made from it.
func Start(ctx context.Context, narration io.Writer, log *zap.Logger, now time.Time, tweak ...func(*config.Config)) (cfg *config.Config, deps app.Deps, done func(), err error) {
	var closers []func()
	done = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			done()
		}
	}()
	cfg, err = config.Parse(config.Demo, "configs/demo.yaml")
	if err != nil {
		return nil, deps, done, err
	}
	for _, f := range tweak {
		f(cfg)
	}
	srv := gcefake.New(gcefake.Options{})
	closers = append(closers, srv.Close)
	fleet := Seed(srv, now)
	gceSnaps := SeedGCESnapshots(srv, fleet, now)
	reg := ecrfake.New(ecrfake.Options{Region: ECRRegion})
	reg.Start()
	closers = append(closers, reg.Close)
	imgs := SeedECR(reg, fleet, now)
	// The real ECR client, over HTTP to the fake, signing with made-up keys.
	ropts := ecrimage.RegistryOptions(cfg, log, "reclaim/demo")
	for i := range ropts {
		ropts[i].Endpoint = reg.URL()
		ropts[i].Credentials = credentials.NewStaticCredentialsProvider("AKIDDEMO", "demo-secret", "")
	}
	images, err := ecr.NewFleet(ctx, ropts)
	if err != nil {
		return nil, deps, done, err
	}

	// The EKS part: the real EC2 client over HTTP to the EC2 fake.
	nets := ec2fake.New(ec2fake.Options{Region: EC2Region, Account: EC2Account})
	nets.Start()
	closers = append(closers, nets.Close)
	eks := SeedEKS(nets, fleet, now)
	nopts := ec2interface.NetworkOptions(cfg, log, "reclaim/demo")
	for i := range nopts {
		nopts[i].Endpoint = nets.URL()
		nopts[i].Credentials = credentials.NewStaticCredentialsProvider("AKIDDEMO", "demo-secret", "")
	}
	networks, err := ec2.NewFleet(ctx, nopts)
	if err != nil {
		return nil, deps, done, err
	}

	// The EBS part: the real EBS client (EC2 and Service Quotas) over HTTP
	// to the EBS fake.
	vols := ebsfake.New(ebsfake.Options{Region: EC2Region, Account: EC2Account})
	vols.Start()
	closers = append(closers, vols.Close)
	ebsStory := SeedEBS(vols, fleet, now)
	snaps := SeedSnapshots(vols, fleet, now)
	volumes, err := ebs.NewFleet(ctx, []ebs.Options{{Service: awsclient.Service{Account: EC2Account, Region: EC2Region, Endpoint: vols.URL(),
		Logger: awsclient.ZapLogger(log), Credentials: credentials.NewStaticCredentialsProvider("AKIDDEMO", "demo-secret", "")},
		QuotasEndpoint: vols.URL()}})
	if err != nil {
		return nil, deps, done, err
	}

	disks, err := gce.New(ctx, gce.Options{Endpoint: srv.URL(), WithoutAuthentication: true})
	if err != nil {
		return nil, deps, done, err
	}
	closers = append(closers, func() { disks.Close() })
	var mu sync.Mutex
	clients := map[string]kubernetes.Interface{}
	collect := func(ctx context.Context) []inventory.ClusterRefs {
		out := make([]inventory.ClusterRefs, len(fleet.Clusters))
		for i, c := range fleet.Clusters {
			cs, dyn := c.Clientsets()
			mu.Lock()
			clients[c.Name] = cs
			mu.Unlock()
			// What a real run reads (the kinds' taps too), from the fakes.
			o := app.KubeOptions(cfg)
			o.PageSize, o.Timeout, o.Images, o.Workloads, o.Subnets = 500, time.Minute, true, true, subnetsOf(cfg, c.Name)
			out[i] = kube.Collect(ctx, c.Name, cs, dyn, o)
		}
		return out
	}
	fmt.Fprintf(narration, "demo: GCE fake at %s with %d disks in %s; clusters prod-a and prod-b simulated in process.\n"+
		"demo: state of earlier runs: %d orphans already being watched. Dry-run: nothing will be deleted.\n\n",
		srv.URL(), len(srv.Disks(Project)), Project, len(fleet.State.Resources))
	fmt.Fprintf(narration, "demo: ECR fake at %s: %s holds %d of 10000 images; one build runs in prod-a only by digest,\n"+
		"demo: one only through a ReplicaSet scaled to zero in prod-b, and a multi-arch index with untagged children runs in prod-a.\n\n",
		reg.URL(), APIRepo, imgs.Total)
	fmt.Fprintf(narration, "demo: EC2 fake at %s: three /20 subnets about 92%% used; EKS clusters batch-use1 and etl-use1\n"+
		"demo: run %d Jobs an hour on Fargate and never delete the %d finished ones, each keeping a pod, a node and an address.\n\n",
		nets.URL(), JobsPerHour, eks.FinishedJobs)
	fmt.Fprintf(narration, "demo: EBS fake at %s: gp3 storage at %.1f of %d TiB; %s was deleted a month ago and left\n"+
		"demo: %d volumes behind, declared out of scope; etl-use1's Kafka volumes are attached.\n\n",
		vols.URL(), float64(ebsStory.UsedGiB)/1024, gp3QuotaTiB, TornDownCluster, len(ebsStory.Orphans)+1)
	fmt.Fprintf(narration, "demo: the same fake holds %d backups earlier runs made before deleting %s's first volumes (%d past\n"+
		"demo: their 30-day retention, one an AMI boots from) and 2 snapshots of etl-use1's CSI driver: one its\n"+
		"demo: VolumeSnapshotContent restores from, one whose content was deleted by hand.\n\n",
		len(snaps.Expired)+2, TornDownCluster, len(snaps.Expired)+1)
	fmt.Fprintf(narration, "demo: the GCE fake holds %d backups earlier runs made before deleting old workflows' disks\n"+
		"demo: (%d past their 30-day retention, one an image was made from).\n\n", len(gceSnaps.Expired)+2, len(gceSnaps.Expired)+1)
	disc, stopDisc, err := Discovery(ctx, cfg, log)
	if err != nil {
		return nil, deps, done, err
	}
	closers = append(closers, stopDisc)
	return cfg, app.Deps{
		Clients: map[string]any{gcepd.Read: disks, ecrimage.Read: images, ec2interface.Read: networks, ebsvolume.Name: volumes,
			ebssnapshot.Name: volumes, gcesnapshot.Name: disks},
		Discovery: disc, Clusters: collect,
		Kube: func(cluster string) (kubernetes.Interface, error) {
			mu.Lock()
			defer mu.Unlock()
			return clients[cluster], nil
		},
		Store: state.NewMemoryStore(fleet.State), Audit: audit.New(io.Discard), Log: log,
		Now: func() time.Time { return now },
	}, done, nil
}

// subnetsOf is a cluster's awsSubnets.
func subnetsOf(cfg *config.Config, cluster string) []string {
	for _, c := range cfg.Clusters {
		if c.Name == cluster {
			return c.AWSSubnets
		}
	}
	return nil
}
