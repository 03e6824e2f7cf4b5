package inventory

import (
	"strings"
	"time"
)

// Job is a batch/v1 Job as the finished-Jobs kind and the IP attribution need it.
type Job struct {
	Namespace string
	Name      string
	UID       string
	// Version is the resourceVersion: a change (a label removed, an
	// annotation edited) makes it newer.
	Version string
	Labels  map[string]string
	// Protected: it carries the opt-out label (kubernetes.protectLabel), any value.
	Protected bool
	// Retention is the value of the retention annotation, verbatim ("" when absent).
	Retention string
	Created   time.Time
	// Status is "Complete" or "Failed" once the matching condition is True, else "".
	Status string
	// Finished is the condition's lastTransitionTime (zero while running).
	Finished time.Time
	// TTL is spec.ttlSecondsAfterFinished, nil when unset.
	TTL    *int32
	Active int32
	// CronJob is the controlling CronJob, if any.
	CronJob     *Owner
	Terminating bool
}

// Done reports whether the Job has finished, successfully or not.
func (j *Job) Done() bool { return j.Status == "Complete" || j.Status == "Failed" }

// CronJob is a batch/v1 CronJob's history limits (defaults applied: 3 and 1).
type CronJob struct {
	Namespace       string
	Name            string
	UID             string
	SuccessfulLimit int32
	FailedLimit     int32
}

// Owner is an object's controlling owner reference.
type Owner struct {
	Kind string
	Name string
	UID  string
}

// Pod is a pod as the finished-Pods kind and the IP attribution need it.
type Pod struct {
	Namespace string
	Name      string
	UID       string
	Version   string // resourceVersion
	Labels    map[string]string
	Protected bool
	Retention string
	Phase     string // Pending, Running, Succeeded, Failed, Unknown
	// IPs are status.podIPs; empty for a hostNetwork pod (its IP is its node's).
	IPs  []string
	Node string
	// Created is creationTimestamp; Finished the latest container
	// termination (zero while running, or when no container reported one).
	Created  time.Time
	Finished time.Time
	// Owner is the controlling owner reference, nil for a bare pod.
	Owner       *Owner
	Terminating bool
	// Stuck says, for a Running pod, which container exited while another
	// keeps running ("main exited 0 at …; istio-proxy still running"): a
	// Job's pod whose sidecar never stops holds its node and address
	// forever. "" otherwise.
	Stuck string
	// Disruption is the reason of a DisruptionTarget condition
	// (PreemptionByScheduler, EvictionByEvictionAPI, DeletionByTaintManager,
	// TerminationByKubelet…): the pod failed for a reason its code did not
	// cause. "" otherwise.
	Disruption string
}

// Done reports whether the pod has finished: no controller restarts it.
func (p *Pod) Done() bool { return p.Phase == "Succeeded" || p.Phase == "Failed" }

// Node is a node's addresses, to attribute IPs held by nodes.
type Node struct {
	Name string
	// IPs are the InternalIP addresses.
	IPs []string
	// Instance is the EC2 instance id from the providerID (aws:///zone/i-…), "" otherwise.
	Instance string
}

// InstanceOfProviderID returns the EC2 instance id of an aws:// providerID, or "".
func InstanceOfProviderID(id string) string {
	if !strings.HasPrefix(id, "aws://") {
		return ""
	}
	last := id[strings.LastIndexByte(id, '/')+1:]
	if strings.HasPrefix(last, "i-") {
		return last
	}
	return ""
}

// CouldUseSubnet reports whether this cluster's pods and nodes could hold an
// address in the subnet.
func (c ClusterRefs) CouldUseSubnet(subnet string) bool {
	if len(c.Subnets) == 0 {
		return true
	}
	for _, s := range c.Subnets {
		if s == subnet {
			return true
		}
	}
	return false
}
