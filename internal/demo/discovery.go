package demo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/fleet"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/gke"
	"reclaim.dev/reclaim/providers/gke/gkefake"
)

// DemoVPC is the VPC of the demo's subnets and EKS clusters.
const DemoVPC = "vpc-0a1b2c3d4e5f60000"

// Discovery starts the fakes the demo's fleet is discovered from: GKE's
// container API lists prod-a and prod-b, EKS lists batch-use1 and etl-use1
// in us-east-1 and no cluster in the registry's region.
// The ML platform's ml-use1 lives in another account and uses subnet 3
// through VPC sharing: discovery of this account cannot see it, only the
// subnet's tag names it. The real clients talk to the fakes; stop closes them.
func Discovery(ctx context.Context, cfg *config.Config, log *zap.Logger) (ds []fleet.Discoverer, stop func(), err error) {
	g := gkefake.New()
	g.Start()
	e := eksfake.New(eksfake.Options{Account: EC2Account, Region: EC2Region})
	e.Start()
	r := eksfake.New(eksfake.Options{Account: Account, Region: ECRRegion})
	r.Start()
	stop = func() { g.Close(); e.Close(); r.Close() }
	for _, name := range []string{"prod-a", "prod-b"} {
		g.Add(gkefake.Cluster{Project: Project, Location: "asia-northeast1", Name: name, Endpoint: name + ".gke.example",
			Network: "projects/" + Project + "/global/networks/default"})
	}
	e.Add(eksfake.Cluster{Name: "batch-use1", Endpoint: "https://batch-use1.eks.example", VPC: DemoVPC, Subnets: DemoSubnetIDs()[:2]},
		eksfake.Cluster{Name: "etl-use1", Endpoint: "https://etl-use1.eks.example", VPC: DemoVPC, Subnets: DemoSubnetIDs()[1:]})
	gc, err := gke.New(ctx, gke.Options{Endpoint: g.Endpoint(), WithoutAuthentication: true})
	if err != nil {
		stop()
		return nil, nil, err
	}
	ec, err := eks.New(ctx, eks.Options{Service: awsclient.Service{Account: EC2Account, Region: EC2Region, Endpoint: e.URL(), Logger: awsclient.ZapLogger(log),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDDEMO", "demo-secret", "")}})
	if err != nil {
		stop()
		return nil, nil, err
	}
	rc, err := eks.New(ctx, eks.Options{Service: awsclient.Service{Account: Account, Region: ECRRegion, Endpoint: r.URL(), Logger: awsclient.ZapLogger(log),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDDEMO", "demo-secret", "")}})
	if err != nil {
		stop()
		return nil, nil, err
	}
	ds = []fleet.Discoverer{
		{Platform: inventory.GKE, Scope: Project, List: func(ctx context.Context) inventory.FleetListing { return gc.Discover(ctx, Project) }},
		{Platform: inventory.EKS, Scope: EC2Account + "/" + EC2Region, List: ec.Discover},
		{Platform: inventory.EKS, Scope: Account + "/" + ECRRegion, List: rc.Discover},
	}
	return ds, stop, nil
}

// DemoSubnetIDs are the ids of DemoSubnets.
func DemoSubnetIDs() []string {
	out := make([]string, len(DemoSubnets))
	for i, s := range DemoSubnets {
		out[i] = s.ID
	}
	return out
}
