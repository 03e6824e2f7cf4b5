// Package k8spod is the k8s-pod kind: finished Pods no controller will act
// on, kept past their retention. On Fargate each holds its own node, network
// interface and subnet address until the Pod object is deleted. A pod of a
// running Job is never touched: deleting it fights the Job controller.
package k8spod

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Name is the kind as reports and the audit log spell it.
const Name = "k8s-pod"

// BatchSize is how many Pods one applier batch re-reads and deletes (one
// by one, paced): the state is saved twice a batch, and with a backlog of
// 100,000 clocks a save is a large write, so batches are large.
const BatchSize = 500

// Classes of Pod decisions besides finished's.
const (
	ClassOwnerRunning = "owner-running"
	ClassController   = "controller"
	ClassPast         = finished.ClassPast
)

// Policy is the pods section.
type Policy struct {
	finished.Policy
	// OwnerKinds are owner kinds besides Job whose finished pods no
	// controller recreates or needs.
	OwnerKinds []string
}

// Kind plans and deletes finished Pods.
type Kind struct {
	*finished.Base[*corev1.Pod]
	Policy Policy
}

// New makes the kind; client returns a cluster's client (nil: plan only).
func New(p Policy, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	k := &Kind{Policy: p}
	k.Base = finished.NewBase(names, Key, "Pod", BatchSize, &k.Policy.Policy, client, finished.API[*corev1.Pod]{Resource: "pod",
		In: func(cs kubernetes.Interface, ns string) finished.Objects[*corev1.Pod] { return cs.CoreV1().Pods(ns) },
		Still: func(p *corev1.Pod) string {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				return "no longer finished (phase " + string(p.Status.Phase) + ")"
			}
			return ""
		},
	})
	return k
}

// Key is the kind's config section.
const Key = "pods"

func init() {
	finished.RegisterSection(Key, "deletes finished Pods no controller acts on, past their retention (k8s-pod)", false,
		config.Duration(time.Hour), config.Duration(7*24*time.Hour), sameAnnotation)
}

// sameAnnotation: the collector reads one retention annotation for Jobs
// and Pods, so the jobs and pods sections must name the same.
func sameAnnotation(r *finished.Retention, c *config.Config, report *config.Report) {
	j := finished.Section(c, "jobs")
	if j != nil && j.RetentionAnnotation != r.RetentionAnnotation {
		report.Add("retentionAnnotation", "%q differs from jobs.retentionAnnotation %q — use one annotation for both", r.RetentionAnnotation, j.RetentionAnnotation)
	}
}

// SectionOf is the file's pods section, nil when it has none.
func SectionOf(cfg *config.Config) *finished.Retention { return finished.Section(cfg, Key) }

// FromConfig makes the kind from the pods section; nil without one.
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	s := SectionOf(cfg)
	if s == nil {
		return nil
	}
	return New(Policy{Policy: finished.PolicyFrom(s, cfg.Kubernetes.ProtectLabel), OwnerKinds: s.OwnerKinds}, client)
}

var names = finished.Names{Kind: Name, Resource: finished.Pods}

// ID names a Pod across the fleet.
func ID(cluster, namespace, name string) string { return names.ID(cluster, namespace, name) }

// Propose gives every finished Pod in scope a proposal: a candidate once no
// controller acts on it and it is past its retention.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	return finished.Propose(snap, finished.Lister[inventory.Pod]{Resource: names.Resource, Noun: "Pods", Policy: k.Policy.Fingerprint(),
		Items:   func(c *inventory.ClusterRefs) []inventory.Pod { return c.Pods },
		Version: func(c *inventory.ClusterRefs) string { return c.PodsVersion },
		Key:     func(p *inventory.Pod) (string, string, string) { return p.Namespace, p.Name, p.UID },
		Eligible: func(p *inventory.Pod) bool {
			return p.Done() && k.Policy.InScope(p.Namespace, p.Labels)
		},
		Prepare: func(c *finished.Cluster) func(*inventory.Pod) engine.Proposal {
			jobs := make(map[string]*inventory.Job, len(c.Jobs))
			for i := range c.Jobs {
				jobs[c.Jobs[i].UID] = &c.Jobs[i]
			}
			return func(p *inventory.Pod) engine.Proposal {
				return k.propose(c, p, jobs, now)
			}
		}})
}

// Finished is when a finished pod is counted from: its last container's
// termination, else (evicted, or never started) its creation.
func Finished(p *inventory.Pod) time.Time {
	if !p.Finished.IsZero() {
		return p.Finished
	}
	return p.Created
}

func (k *Kind) propose(c *finished.Cluster, pod *inventory.Pod, jobs map[string]*inventory.Job, now time.Time) engine.Proposal {
	ips := finished.IPv4s(pod.IPs)
	det := &finished.Detail{Cluster: c.Name, Namespace: pod.Namespace, UID: pod.UID, Status: pod.Phase, IPs: ips, Retention: pod.Retention, Labels: pod.Labels,
		NamespaceLabels: c.NamespaceLabels[pod.Namespace]}
	p := names.Proposal(pod.Name, det)
	if pod.Terminating {
		return finished.Keep(&p, finished.ClassDeleting, "already being deleted")
	}
	owner := "no owner"
	// from is when the pod's own evidence (and its Job's) made it a
	// candidate, witnessed by the listings that showed them; terminal is
	// false (a clock kept per pod) when they do not show since when.
	var from time.Time
	terminal := true
	witnesses := []engine.Witness{finished.Witness(c.Listing, pod.Version)}
	if o := pod.Owner; o != nil {
		switch {
		case o.Kind == "Job":
			det.Job = o.Name
			j := jobs[o.UID]
			switch {
			case j == nil:
				owner = "its Job " + o.Name + " is gone"
				terminal = false // since when, the pod does not say
			case !j.Done():
				return finished.Keep(&p, ClassOwnerRunning, "its Job "+o.Name+" is still running: deleting the pod would fight the Job controller")
			case j.Protected || j.Retention == "never":
				// Whoever keeps the Job keeps its pods (and their logs).
				return finished.Keep(&p, finished.ClassProtected, "its Job "+o.Name+" is kept (protected, or retention never)")
			default:
				owner = "its Job " + o.Name + " is " + j.Status
				if j.Finished.IsZero() {
					terminal = false
				}
				from = j.Finished
				witnesses = append(witnesses, finished.Witness(c.JobsListing, j.Version))
				if j.CronJob != nil {
					det.CronJob = j.CronJob.Name
				}
			}
		case slices.Contains(k.Policy.OwnerKinds, o.Kind):
			owner = "owned by " + o.Kind + " " + o.Name + " (pods.ownerKinds)"
		default:
			return finished.Keep(&p, ClassController, "owned by "+o.Kind+" "+o.Name+", whose controller acts on its pods")
		}
	}
	if pod.Protected {
		p.Class, p.Protected = finished.ClassProtected, "protected by the label "+k.Policy.ProtectLabel
		return p
	}
	fin := Finished(pod)
	v := k.Policy.Retain(pod.Phase == "Succeeded", fin, pod.Retention, now)
	if v.Keep != "" {
		return finished.Keep(&p, v.Keep, v.Reason)
	}
	p.Candidate, p.Identity, p.Sources, p.Created = true, pod.UID, c.Sources, pod.Created
	if terminal {
		p.Witnesses, p.CandidateFrom = witnesses, finished.Latest(from, v.Until)
	}
	p.Class, p.Reason = ClassPast, fmt.Sprintf("%s pod, %s; %s", pod.Phase, owner, v.Reason)
	if pod.Finished.IsZero() {
		p.Reason += " (no container finish time: counted from its creation)"
	}
	if n := ips; n > 0 {
		p.Reason += fmt.Sprintf("; holds %d subnet address(es)", n)
	}
	return p
}
