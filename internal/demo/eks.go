package demo

import (
	"fmt"
	"net/netip"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
)

// The EKS part of the demo: AWS's documented example account, and the
// region and subnets of configs/demo.yaml.
// UnlistedCluster is an EKS cluster of another account that uses a demo
// subnet through VPC sharing: not in the demo config, not in the accounts
// discovered, named only by the subnet's tag.
const UnlistedCluster = "ml-use1"

const (
	EC2Account = "123456789012"
	EC2Region  = "us-east-1"
)

// DemoSubnets are the three /20 private subnets of the Fargate profiles.
var DemoSubnets = []ec2fake.Subnet{
	{ID: "subnet-0a1b2c3d4e5f60001", AZ: "us-east-1a", CIDR: "10.20.0.0/20", VPC: "vpc-0a1b2c3d4e5f60000", Tags: map[string]string{"Name": "batch-private-a"}},
	{ID: "subnet-0a1b2c3d4e5f60002", AZ: "us-east-1b", CIDR: "10.20.16.0/20", VPC: "vpc-0a1b2c3d4e5f60000", Tags: map[string]string{"Name": "batch-private-b"}},
	{ID: "subnet-0a1b2c3d4e5f60003", AZ: "us-east-1c", CIDR: "10.20.32.0/20", VPC: "vpc-0a1b2c3d4e5f60000",
		// The ML platform's cluster shares this subnet; the config misses it.
		Tags: map[string]string{"Name": "batch-private-c", "kubernetes.io/cluster/" + UnlistedCluster: "shared"}},
}

// What the EKS part seeds per subnet: finished Jobs' pods (each with its
// own Fargate interface and address), running pods, a node with its CNI
// warm pool, and interfaces nothing reclaim knows holds.
const (
	finishedPerSubnet = 3360
	runningPerSubnet  = 300
	warmPool          = 60
	strangers         = 40
	// JobsPerHour is the batch platform's rate, spread over both clusters.
	JobsPerHour = 500
)

// EKS is what the EKS part seeded, for the demo's narration and tests.
type EKS struct {
	FinishedJobs int
	// HeldByUnlisted is a CNI leftover in the subnet UnlistedCluster shares:
	// held while that cluster is not read.
	HeldByUnlisted string
	// Leaked is the CNI interface reclaim may delete; RequesterManaged the
	// one it must never delete.
	Leaked, RequesterManaged string
}

// SeedEKS seeds the EC2 fake and two EKS clusters (added to f) with the
// Fargate story: three /20 subnets about 92% used, most of it by the pods of
// finished Jobs nobody deletes.
func SeedEKS(srv *ec2fake.Server, f *Fleet, now time.Time) EKS {
	s := &seeder{f: f, now: now}
	batch := &Cluster{Name: "batch-use1"}
	etl := &Cluster{Name: "etl-use1"}
	f.Clusters = append(f.Clusters, batch, etl)
	for _, sn := range DemoSubnets {
		srv.AddSubnet(sn)
	}
	var out EKS
	jobsSucceeded := 2 * time.Hour // configs/demo.yaml jobs.succeeded
	jobsGrace := time.Hour
	for si, sn := range DemoSubnets {
		next := addresses(sn.CIDR)
		// Subnet a is batch-use1's, c is etl-use1's, b is shared.
		owner := func(i int) *Cluster {
			switch {
			case si == 0, si == 1 && i%2 == 0:
				return batch
			}
			return etl
		}
		var ifaces []ec2fake.Interface
		fargate := func(c *Cluster, p *corev1.Pod) {
			ip := next()
			p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
			p.Spec.NodeName = "fargate-ip-" + ip
			ifaces = append(ifaces, ec2fake.Interface{Subnet: sn.ID, IPs: []string{ip}, Status: "in-use"})
			c.Objects = append(c.Objects, p)
		}
		// Finished Jobs of the batch platform, one every 7 seconds or so over
		// the last 20 hours; one in 60 failed (kept 3 days for debugging).
		for i := 0; i < finishedPerSubnet; i++ {
			c := owner(i)
			ns := []string{"ingest", "transform"}[i%2]
			finished := now.Add(-time.Duration(i) * time.Duration(float64(time.Hour)*3/JobsPerHour))
			status := batchv1.JobComplete
			if i%60 == 7 {
				status = batchv1.JobFailed
			}
			job, p := s.job(c, ns, fmt.Sprintf("task-%s-%05d", sn.AZ[len(sn.AZ)-1:], i), status, finished, nil)
			if si == 0 && i == 7 {
				// Failed because the scheduler preempted its pod, not
				// because of its code: a Job to look at.
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}
			}
			fargate(c, p)
			out.FinishedJobs++
			// Earlier runs have watched those past their retention.
			if status == batchv1.JobComplete && now.Sub(finished) > jobsSucceeded+jobsGrace {
				f.State.Seen(k8sjob.ID(c.Name, ns, job.Name), string(job.UID), finished.Add(jobsSucceeded))
			}
		}
		// Running pods: Jobs still at work.
		for i := 0; i < runningPerSubnet; i++ {
			c := owner(i)
			_, p := s.job(c, "ingest", fmt.Sprintf("task-%s-run-%03d", sn.AZ[len(sn.AZ)-1:], i), "", time.Time{}, nil)
			if si == 0 && i == 0 {
				// The zombie: its task exited two days ago, its mesh
				// sidecar never stops, so the Job never finishes.
				exited := now.Add(-47 * time.Hour)
				p.CreationTimestamp = metav1.NewTime(exited.Add(-10 * time.Minute))
				p.Status.ContainerStatuses = []corev1.ContainerStatus{
					{Name: "task", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(exited)}}},
					{Name: "istio-proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			}
			fargate(c, p)
		}
		// An EC2 node of the system node group, with the CNI's warm pool.
		c := owner(0)
		instance := fmt.Sprintf("i-0a1b2c3d4e5f6000%d", si)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-node-" + sn.AZ},
			Spec: corev1.NodeSpec{ProviderID: "aws:///" + sn.AZ + "/" + instance}}
		var pool []string
		for i := 0; i < warmPool; i++ {
			pool = append(pool, next())
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: pool[0]}}
		c.Objects = append(c.Objects, node)
		ifaces = append(ifaces, ec2fake.Interface{Subnet: sn.ID, IPs: pool, Instance: instance, Description: "aws-K8S-" + instance,
			Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": instance}})
		// Interfaces of things outside the clusters (a bastion, a VPC endpoint).
		for i := 0; i < strangers; i++ {
			ifaces = append(ifaces, ec2fake.Interface{Subnet: sn.ID, IPs: []string{next()}, Instance: fmt.Sprintf("i-0f0e0d0c0b0a0%04d", si*100+i),
				Description: "Primary network interface"})
		}
		switch si {
		case 0:
			// A node terminated while its CNI was not cleaning up: its warm
			// pool's interface stayed behind, detached.
			gone := "i-0a1b2c3d4e5f6fff0"
			out.Leaked = "eni-0a1b2c3d4e5f6aaa1"
			ifaces = append(ifaces, ec2fake.Interface{ID: out.Leaked, Subnet: sn.ID, IPs: []string{next(), next(), next(), next(), next()},
				Description: "aws-K8S-" + gone, Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": gone,
					"node.k8s.amazonaws.com/createdAt": now.Add(-10 * 24 * time.Hour).UTC().Format(time.RFC3339)}})
			f.State.Seen(ec2interface.ID(EC2Account, EC2Region, out.Leaked), "", now.Add(-9*time.Hour))
		case 1:
			// A load balancer's interface, detached for a moment: the
			// service that made it owns it.
			out.RequesterManaged = "eni-0a1b2c3d4e5f6bbb2"
			ifaces = append(ifaces, ec2fake.Interface{ID: out.RequesterManaged, Subnet: sn.ID, IPs: []string{next()}, RequesterManaged: true,
				RequesterID: "amazon-elb", Description: "ELB app/batch-api/0a1b2c3d4e5f6789"})
		case 2:
			// Detached, with the CNI's marks, in the subnet the ML cluster
			// shares: its address may be a pod's there, which reclaim cannot see.
			gone := "i-0a1b2c3d4e5f6fff2"
			out.HeldByUnlisted = "eni-0a1b2c3d4e5f6ccc3"
			ifaces = append(ifaces, ec2fake.Interface{ID: out.HeldByUnlisted, Subnet: sn.ID, IPs: []string{next(), next()},
				Description: "aws-K8S-" + gone, Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": gone,
					"cluster.k8s.amazonaws.com/name": UnlistedCluster}})
			f.State.Seen(ec2interface.ID(EC2Account, EC2Region, out.HeldByUnlisted), "", now.Add(-9*time.Hour))
		}
		srv.AddInterfaces(ifaces...)
	}
	// A CronJob's history: the newest 3 successful and the newest failed
	// Jobs are the CronJob controller's to keep.
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "hourly-rollup", UID: types.UID(s.uid())},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	etl.Objects = append(etl.Objects, cj)
	for i := 0; i < 4; i++ {
		status := batchv1.JobComplete
		if i == 1 {
			status = batchv1.JobFailed
		}
		s.job(etl, "reports", fmt.Sprintf("hourly-rollup-%d", 29000000+i), status, now.Add(-time.Duration(i+1)*time.Hour+5*time.Minute), cj)
	}
	// A bare pod someone ran by hand in the sandbox, finished yesterday.
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "sandbox", Name: "debug-curl", UID: types.UID(s.uid()),
		CreationTimestamp: metav1.NewTime(now.Add(-26 * time.Hour))},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "curl", Image: "curlimages/curl"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: "curl", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-25 * time.Hour))}}}}}}
	batch.Objects = append(batch.Objects, bare)
	return out
}

// job adds a Job (finished with status at finished, or running when status
// is "") and its pod, which the caller places.
func (s *seeder) job(c *Cluster, ns, name string, status batchv1.JobConditionType, finished time.Time, cj *batchv1.CronJob) (*batchv1.Job, *corev1.Pod) {
	t := true
	created := finished.Add(-4 * time.Minute)
	if status == "" {
		created = s.now.Add(-3 * time.Minute)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(s.uid()), CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{"app.kubernetes.io/part-of": "batch-platform"}}}
	podPhase := corev1.PodRunning
	if status != "" {
		job.Status.Conditions = []batchv1.JobCondition{{Type: status, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(finished)}}
		podPhase = corev1.PodSucceeded
		if status == batchv1.JobFailed {
			job.Status.Failed, podPhase = 1, corev1.PodFailed
		} else {
			job.Status.Succeeded = 1
		}
	} else {
		job.Status.Active = 1
	}
	if cj != nil {
		job.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &t}}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-x7k2p", UID: types.UID(s.uid()), CreationTimestamp: metav1.NewTime(created),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: job.UID, Controller: &t}}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "task", Image: "batch/task:1"}}},
		Status: corev1.PodStatus{Phase: podPhase}}
	if status != "" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "task", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}}}
	}
	c.Objects = append(c.Objects, job)
	if cj == nil {
		return job, p
	}
	c.Objects = append(c.Objects, p) // a CronJob's pods run on EC2 nodes: no subnet address of their own here
	return job, p
}

// addresses returns a function yielding the subnet's usable addresses in
// order (AWS reserves the first four and the last).
func addresses(cidr string) func() string {
	p := netip.MustParsePrefix(cidr)
	a := p.Addr().Next().Next().Next().Next()
	return func() string {
		ip := a
		a = a.Next()
		return ip.String()
	}
}
