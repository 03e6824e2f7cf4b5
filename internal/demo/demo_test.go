package demo

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcesnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// demoReport runs the demo once for the tests that read its report (a run
// seeds 10,000 Jobs: under -race, once is enough).
var demoReport = sync.OnceValues(func() (*report.Report, error) {
	return Run(context.Background(), io.Discard, zap.NewNop())
})

// The demo must tell the story the README and docs/kinds promise.
func TestDemoTellsTheStory(t *testing.T) {
	rep, err := demoReport()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	// Incomplete only because a cluster the config misses holds what it may use.
	if rep.Mode != "dry-run" || rep.Outcome != nil || !p.Incomplete || len(p.Blocked) != 1 || !strings.Contains(p.Blocked[0], UnlistedCluster) {
		t.Fatalf("mode %s, outcome %v, incomplete %v, held back %q", rep.Mode, rep.Outcome, p.Incomplete, p.Blocked)
	}
	var ssd bool
	for _, h := range gcedisk.HeadroomOf(p) {
		if h.Metric == "SSD_TOTAL_GB" {
			ssd = true
			if h.UsedPct < 0.96 || h.UsedPct > 0.98 || !h.Known || h.PlanFrees != 200 || h.FinishedWorkflowGB != 600 ||
				h.RunsOutAt == nil || h.GrowthPerDay < 39 || h.GrowthPerDay > 41 || !h.Warning {
				t.Fatalf("SSD headroom: %+v", h)
			}
		}
	}
	if !ssd {
		t.Fatal("no SSD_TOTAL_GB headroom")
	}
	reasons := map[string][]string{}
	for _, d := range p.Decisions {
		if d.Kind == gcedisk.Name {
			reasons[string(d.Action)] = append(reasons[string(d.Action)], d.Why())
		}
	}
	if n := len(reasons["delete"]); n != 8 {
		t.Fatalf("%d disks to delete, want the 8 true orphans", n)
	}
	all := strings.Join(reasons["keep"], "\n")
	for _, want := range []string{
		"bound to kafka/data-kafka-0",           // StatefulSet scaled to zero
		"in cluster prod-b (Released",           // only the second cluster knows it
		"protected by label reclaim-protect",    // opt-out
		"attached to instance gke-prod-a-pool-", // running pods
		"owned by Workflow data-eng/etl-nightly-00 (Failed)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no kept disk says %q", want)
		}
	}
	marks := strings.Join(reasons["mark"], "\n")
	if !strings.Contains(marks, "younger than min age") || !strings.Contains(marks, "deletable after") {
		t.Errorf("marks: %s", marks)
	}
	if len(reasons["report"]) != 1 || !strings.Contains(reasons["report"][0], "nothing proves Kubernetes created it") {
		t.Errorf("reports: %v", reasons["report"])
	}
	if p.Count(k8spvc.Name, engine.Report) != 30 || len(k8spvc.HoldersOf(p)) != 30 {
		t.Errorf("finished-workflow PVCs: %d reported, %d holders", p.Count(k8spvc.Name, engine.Report), len(k8spvc.HoldersOf(p)))
	}
}

// The ECR part: shop/api at 9,990 of 10,000 is trimmed to its target without
// touching any image a cluster can still pull.
func TestDemoTrimsECRSafely(t *testing.T) {
	rep, err := demoReport()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	var api *ecrimage.RepoSummary
	for i, r := range ecrimage.RepositoriesOf(p) {
		if r.Name == APIRepo {
			api = &ecrimage.RepositoriesOf(p)[i]
		}
	}
	if api == nil || api.Images != 9990 || api.Limit != 10000 || api.Delete != 490 || api.After != 9500 || !api.Warning || api.Blocked != "" {
		t.Fatalf("shop/api summary: %+v", api)
	}
	byDigest := map[string]engine.Decision{}
	for _, d := range p.Decisions {
		if d.Kind == ecrimage.Name && d.Name == APIRepo {
			byDigest[ecrimage.DetailOf(&d).Digest] = d
		}
	}
	// Reconstruct the story's digests the way the seed makes them.
	im := storyImages(t)
	want := func(digest string, action engine.Action, class, reason string) {
		t.Helper()
		d, ok := byDigest[digest]
		if !ok || d.Action != action || d.Class != class || !strings.Contains(d.Why(), reason) {
			t.Errorf("%s: %s %s %q; want %s %s containing %q", digest[:19], d.Action, d.Class, d.Why(), action, class, reason)
		}
	}
	want(im.ByDigest, engine.Keep, ecrimage.ClassInUse, "prod-a/shop/Pod/payments-0")
	want(im.RollbackRS, engine.Keep, ecrimage.ClassInUse, "prod-b/shop/ReplicaSet/checkout-6d9f7c")
	want(im.Index, engine.Keep, ecrimage.ClassInUse, "prod-a/shop/Deployment/storefront")
	for _, c := range im.IndexChildren {
		want(c, engine.Keep, ecrimage.ClassIndexChild, "child of index "+im.Index[:19])
	}
	want(im.OldIndex, engine.Delete, ecrimage.ClassTrim, "oldest unneeded")
	for _, c := range im.OldChildren {
		want(c, engine.Delete, ecrimage.ClassTrim, "child of index "+im.OldIndex[:19])
		if d := byDigest[c]; len(ecrimage.DetailOf(&d).Parents) != 1 || ecrimage.DetailOf(&d).Parents[0] != im.OldIndex {
			t.Errorf("old child parents %v", ecrimage.DetailOf(&d).Parents)
		}
	}
	var b strings.Builder
	if err := rep.Text(&b, report.TextOptions{MaxKept: 3}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ECR REPOSITORIES", "9990/10000", "9900→9500", "pushes fail at the limit", "images delete 490"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func storyImages(t *testing.T) Images {
	t.Helper()
	srv := ecrfake.New(ecrfake.Options{Region: ECRRegion})
	f := Seed(gcefake.New(gcefake.Options{}), time.Now())
	return SeedECR(srv, f, time.Now())
}

// The EKS part: three /20 subnets at about 92%, most of it held by finished
// Jobs' pods; the plan deletes the Jobs past retention (and says what that
// frees), keeps failed Jobs inside their retention and a CronJob's history,
// deletes the leaked CNI interface and never the requester-managed one.
func TestDemoTellsTheEKSStory(t *testing.T) {
	rep, err := demoReport()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	subnets := ec2interface.HeadroomOf(p)
	if len(subnets) != 3 {
		t.Fatalf("%d subnets, want 3", len(subnets))
	}
	for _, h := range subnets {
		if h.Usable != 4091 || h.UsedPct < 0.91 || h.UsedPct > 0.93 || !h.Warning || !h.Attributed ||
			h.FinishedPods != finishedPerSubnet || h.RunningPods != runningPerSubnet || h.Nodes != warmPool ||
			h.PlanFrees < 2500 || h.RunsOutAt == nil || h.RateFrom != "pod creations" {
			t.Errorf("subnet %+v", h)
		}
	}
	if hs := ec2interface.FinishedHoldersOf(p); len(hs) == 0 || hs[0].IPs < 3000 {
		t.Errorf("holders %+v", hs)
	}
	eks := SeedEKS(ec2fake.New(ec2fake.Options{}), &Fleet{State: engine.NewState()}, time.Now())
	byID := map[string]engine.Decision{}
	classes := map[string]int{}
	for _, d := range p.Decisions {
		byID[d.ID] = d
		if d.Kind == k8sjob.Name {
			classes[string(d.Action)+"/"+d.Class]++
		}
	}
	if d := byID[ec2interface.ID(EC2Account, EC2Region, eks.Leaked)]; d.Action != engine.Delete {
		t.Errorf("leaked interface: %s %q", d.Action, d.Why())
	}
	// The ML cluster the config misses shares subnet 3 (its subnet tag): the
	// leftover there is held and the fleet section names the cluster.
	if d := byID[ec2interface.ID(EC2Account, EC2Region, eks.HeldByUnlisted)]; d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "cluster "+UnlistedCluster) {
		t.Errorf("interface in the unlisted cluster's subnet: %s %q", d.Action, d.Why())
	}
	rows, _ := layout.Data(p.Sections, "fleet").([]engine.FleetRow)
	unlisted, joined := false, 0
	for _, r := range rows {
		unlisted = unlisted || (strings.HasPrefix(r.Name, UnlistedCluster+"@") && r.State == "not-read")
		if r.Configured && r.Discovered && r.State == "read" {
			joined++
		}
	}
	if joined != 4 {
		t.Errorf("%d configured clusters joined with their discovered ones, want 4: %+v", joined, rows)
	}
	if !unlisted {
		t.Errorf("the fleet section does not name %s: %+v", UnlistedCluster, rows)
	}
	if d := byID[ec2interface.ID(EC2Account, EC2Region, eks.RequesterManaged)]; d.Action != engine.Keep || d.Class != ec2interface.ClassRequesterManaged {
		t.Errorf("requester-managed interface: %s %s %q", d.Action, d.Class, d.Why())
	}
	if classes["delete/"+k8sjob.ClassPast] < 8000 || classes["keep/"+finished.ClassRetained] == 0 || classes["keep/"+k8sjob.ClassHistory] != 4 {
		t.Errorf("Job decisions by class: %v", classes)
	}
	failedKept := 0
	for _, d := range p.Decisions {
		if d.Kind == k8sjob.Name && finished.DetailOf(&d).Status == "Failed" && d.Class == finished.ClassRetained {
			failedKept++
		}
	}
	if failedKept == 0 {
		t.Error("no failed Job kept inside its retention")
	}
	var b strings.Builder
	if err := rep.Text(&b, report.TextOptions{MaxKept: 3}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SUBNET IP HEADROOM", "WHO HOLDS THE SUBNET ADDRESSES", "FINISHED JOBS", "runs out about", "requester-managed"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

// The EBS part: the torn-down cluster's volumes are deleted up to the
// count cap, the rest wait for the next run; a protected one, one a
// Released PV names, the hand-made one and the attached Kafka volumes are
// kept; the gp3 quota row says what the plan frees.
func TestDemoTellsTheEBSStory(t *testing.T) {
	rep, err := demoReport()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	story := SeedEBS(ebsfake.New(ebsfake.Options{}), &Fleet{State: engine.NewState()}, time.Now())
	byID := map[string]engine.Decision{}
	for _, d := range p.Decisions {
		if d.Kind == ebsvolume.Name {
			byID[d.Name] = d
		}
	}
	deleted, capped := 0, 0
	for _, id := range story.Orphans {
		switch d := byID[id]; {
		case d.Action == engine.Delete:
			deleted++
		case d.Action == engine.Mark && d.Held && strings.Contains(d.Why(), "per-run cap"):
			capped++
		default:
			t.Errorf("orphan %s: %s %q", id, d.Action, d.Why())
		}
	}
	if deleted != 10 || capped != tornDownVolumes-10 {
		t.Errorf("orphans: %d deleted, %d held by the cap", deleted, capped)
	}
	for id, class := range map[string]string{story.Protected: ebsvolume.ClassProtected, story.Retained: ebsvolume.ClassPV, story.HandMade: ebsvolume.ClassNoEvidence} {
		if d := byID[id]; d.Action != engine.Keep || d.Class != class {
			t.Errorf("%s: %s %s %q, want keep %s", id, d.Action, d.Class, d.Why(), class)
		}
	}
	for _, id := range story.InUse {
		if d, ok := byID[id]; ok && d.Action != engine.Keep {
			t.Errorf("attached %s: %s %q", id, d.Action, d.Why())
		}
	}
	hs := ebsvolume.HeadroomOf(p)
	if len(hs) != 1 || !hs[0].Known || hs[0].VolumeType != "gp3" || hs[0].UsageGiB != float64(story.UsedGiB) ||
		hs[0].LimitGiB != gp3QuotaTiB*1024 || !hs[0].Warning || hs[0].PlanFreesGiB != 5000 {
		t.Errorf("gp3 headroom %+v", hs)
	}
	rows, _ := layout.Data(p.Sections, "fleet").([]engine.FleetRow)
	if !slices.ContainsFunc(rows, func(r engine.FleetRow) bool { return r.Name == TornDownCluster && r.State == "out-of-scope" }) {
		t.Errorf("the fleet section does not declare %s out of scope: %+v", TornDownCluster, rows)
	}
}

// reclaim's backups past retention go, a fresh one and one an AMI boots
// from stay, a CSI snapshot a content names stays, an orphaned one is
// reported, and the backups that stay are priced in the summary.
func TestDemoTellsTheSnapshotStory(t *testing.T) {
	rep, err := demoReport()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	srv := ebsfake.New(ebsfake.Options{Account: EC2Account})
	f := &Fleet{State: engine.NewState()}
	SeedEBS(srv, f, time.Now())
	story := SeedSnapshots(srv, f, time.Now())
	byID := map[string]engine.Decision{}
	for _, d := range p.Decisions {
		if d.Kind == ebssnapshot.Name {
			byID[d.Name] = d
		}
	}
	for _, id := range story.Expired {
		if d := byID[id]; d.Action != engine.Delete || d.Class != ebssnapshot.ClassExpired {
			t.Errorf("expired backup %s: %s %s %q", id, d.Action, d.Class, d.Why())
		}
	}
	for id, want := range map[string]struct {
		action engine.Action
		class  string
	}{
		story.Fresh:   {engine.Keep, ebssnapshot.ClassRetained},
		story.Imaged:  {engine.Keep, ebssnapshot.ClassInUse},
		story.Restore: {engine.Keep, ebssnapshot.ClassCSIInUse},
		story.Orphan:  {engine.Report, ebssnapshot.ClassCSIOrphan},
	} {
		if d := byID[id]; d.Action != want.action || d.Class != want.class {
			t.Errorf("%s: %s %s %q, want %s %s", id, d.Action, d.Class, d.Why(), want.action, want.class)
		}
	}
	if d := byID[story.Imaged]; !strings.Contains(d.Why(), "AMI ami-") {
		t.Errorf("the AMI's snapshot says %q", d.Why())
	}
	if d := byID[story.Restore]; !strings.Contains(d.Why(), "VolumeSnapshot kafka/data-kafka-0-pre-upgrade") {
		t.Errorf("the restore's snapshot says %q", d.Why())
	}
	// On GCE, the same: past retention goes, fresh and made into an image stays.
	gs := SeedGCESnapshots(gcefake.New(gcefake.Options{}), &Fleet{State: engine.NewState()}, p.GeneratedAt)
	gce := map[string]engine.Decision{}
	for _, d := range p.Decisions {
		if d.Kind == gcesnapshot.Name {
			gce[d.Name] = d
		}
	}
	for _, name := range gs.Expired {
		if d := gce[name]; d.Action != engine.Delete {
			t.Errorf("expired GCE backup %s: %s %q", name, d.Action, d.Why())
		}
	}
	for _, name := range []string{gs.Fresh, gs.Imaged} {
		if d := gce[name]; d.Action != engine.Keep {
			t.Errorf("GCE backup %s: %s %q, want keep", name, d.Action, d.Why())
		}
	}
	// What stays of reclaim's backups, on both clouds, is one line: EBS's
	// fresh one (500 GiB) and the AMI's (100 GiB) at 0.05 a GiB-month,
	// GCE's two storing 12 GiB each at 0.065.
	want := "reclaim's backups that stay: 4, 624 GiB, about 31.56 USD a month (EBS snapshots 2, 600 GiB, 30.00; GCE snapshots 2, 24 GiB, 1.56)"
	if !slices.Contains(p.Summaries, want) {
		t.Errorf("summaries lack %q: %q", want, p.Summaries)
	}
}
