// Package k8sjob is the k8s-job kind: finished Jobs kept past their
// retention. Finished Jobs are never deleted by Kubernetes unless they set
// ttlSecondsAfterFinished, so they pile up in etcd; on Fargate each one's
// pod keeps a node, a network interface and a subnet address. Deleting a Job
// with propagationPolicy Background takes its pods with it.
package k8sjob

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Name is the kind as reports and the audit log spell it.
const Name = "k8s-job"

// BatchSize is how many Jobs one applier batch re-reads and deletes (one
// by one, paced): the state is saved twice a batch, and with a backlog of
// 100,000 clocks a save is a large write, so batches are large.
const BatchSize = 500

// Classes of Job decisions besides finished's.
const (
	ClassHistory = "cronjob-history"
	ClassTTL     = "ttl-controller"
	ClassPast    = finished.ClassPast
)

// Policy is the jobs section.
type Policy struct {
	finished.Policy
	KeepCronJobHistory bool
	TTLGrace           time.Duration
}

// Kind plans and deletes finished Jobs: deleting one with
// propagationPolicy Background takes its pods with it.
type Kind struct {
	*finished.Base[*batchv1.Job]
	Policy Policy
}

// New makes the kind; client returns a cluster's client (nil: plan only).
func New(p Policy, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	bg := metav1.DeletePropagationBackground
	k := &Kind{Policy: p}
	k.Base = finished.NewBase(names, Key, "Job", BatchSize, &k.Policy.Policy, client, finished.API[*batchv1.Job]{Resource: "job", Propagation: &bg,
		In:    func(cs kubernetes.Interface, ns string) finished.Objects[*batchv1.Job] { return cs.BatchV1().Jobs(ns) },
		Still: stillFinished,
	})
	return k
}

// Key is the kind's config section.
const Key = "jobs"

func init() {
	finished.RegisterSection(Key, "deletes Jobs finished longer ago than their retention (k8s-job)", true,
		config.Duration(24*time.Hour), config.Duration(7*24*time.Hour), nil)
}

// SectionOf is the file's jobs section, nil when it has none.
func SectionOf(cfg *config.Config) *finished.Retention { return finished.Section(cfg, Key) }

// FromConfig makes the kind from the jobs section; nil without one.
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	j := SectionOf(cfg)
	if j == nil {
		return nil
	}
	p := Policy{Policy: finished.PolicyFrom(j, cfg.Kubernetes.ProtectLabel)}
	if j.TTLGrace != nil {
		p.TTLGrace = j.TTLGrace.Std()
	}
	p.KeepCronJobHistory = j.KeepCronJobHistory == nil || *j.KeepCronJobHistory
	return New(p, client)
}

// stillFinished: a Job re-read as not finished (restarted by a person with a
// changed spec, or a status rewritten) is not deleted.
func stillFinished(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
			return ""
		}
	}
	return "no longer finished"
}

var names = finished.Names{Kind: Name, Resource: finished.Jobs}

// ID names a Job across the fleet.
func ID(cluster, namespace, name string) string { return names.ID(cluster, namespace, name) }

// Propose gives every finished Job in scope a proposal: a candidate once it
// is past its retention and nothing else keeps it. Running Jobs get none.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	return finished.Propose(snap, finished.Lister[inventory.Job]{Resource: names.Resource, Noun: "Jobs", Policy: k.Policy.Fingerprint(),
		Items:    func(c *inventory.ClusterRefs) []inventory.Job { return c.Jobs },
		Version:  func(c *inventory.ClusterRefs) string { return c.JobsVersion },
		Listings: k.cronListings,
		Key:      func(j *inventory.Job) (string, string, string) { return j.Namespace, j.Name, j.UID },
		Eligible: func(j *inventory.Job) bool {
			return j.Done() && k.Policy.InScope(j.Namespace, j.Labels)
		},
		Prepare: func(c *finished.Cluster) func(*inventory.Job) engine.Proposal {
			h, ips := k.history(c.ClusterRefs), ipsByJob(c.ClusterRefs)
			return func(j *inventory.Job) engine.Proposal {
				p := k.propose(c.Name, j, h.keep, ips[j.UID], c.Sources, now)
				p.Detail.(*finished.Detail).NamespaceLabels = c.NamespaceLabels[j.Namespace]
				if !p.Candidate {
					return p
				}
				// Terminal: a clock derived from the listing, not kept.
				listing := c.Listing
				if j.CronJob != nil && k.Policy.KeepCronJobHistory {
					// Out of its CronJob's history since the newer Jobs that
					// pushed it out finished, under the CronJob's limits
					// (in the listing's name: a change starts anew).
					listing += " " + h.key[j.UID]
					p.CandidateFrom = finished.Latest(p.CandidateFrom, h.pushed[j.UID])
				}
				p.Witnesses = []engine.Witness{finished.Witness(listing, j.Version)}
				return p
			}
		}})
}

func (k *Kind) propose(cluster string, j *inventory.Job, history map[string]string, ips int, sources []string, now time.Time) engine.Proposal {
	det := &finished.Detail{Cluster: cluster, Namespace: j.Namespace, UID: j.UID, Status: j.Status, IPs: ips, Retention: j.Retention, Labels: j.Labels}
	if j.CronJob != nil {
		det.CronJob = j.CronJob.Name
	}
	p := names.Proposal(j.Name, det)
	if j.Terminating {
		return finished.Keep(&p, finished.ClassDeleting, "already being deleted")
	}
	if j.Protected {
		p.Class, p.Protected = finished.ClassProtected, "protected by the label "+k.Policy.ProtectLabel
		return p
	}
	if why, ok := history[j.UID]; ok {
		return finished.Keep(&p, ClassHistory, why)
	}
	if j.Finished.IsZero() {
		return finished.Keep(&p, finished.ClassNoFinished, j.Status+" but its condition has no transition time; reclaim cannot tell how long ago")
	}
	var why string
	if j.TTL != nil {
		// The TTL controller's to honour: reclaim steps in only when it is
		// clearly not doing its job (not running, or far behind).
		due := j.Finished.Add(time.Duration(*j.TTL) * time.Second)
		if now.Before(due.Add(k.Policy.TTLGrace)) {
			return finished.Keep(&p, ClassTTL, fmt.Sprintf("ttlSecondsAfterFinished %d: the TTL controller deletes it at %s", *j.TTL, fmtTime(due)))
		}
		why = fmt.Sprintf("finished %s, past its ttlSecondsAfterFinished %d by more than %s: the TTL controller has not deleted it",
			fmtTime(j.Finished), *j.TTL, config.Duration(k.Policy.TTLGrace))
		p.CandidateFrom = due.Add(k.Policy.TTLGrace)
	} else {
		v := k.Policy.Retain(j.Status == "Complete", j.Finished, j.Retention, now)
		if v.Keep != "" {
			return finished.Keep(&p, v.Keep, v.Reason)
		}
		why, p.CandidateFrom = v.Reason, v.Until
	}
	p.Candidate, p.Identity, p.Sources, p.Created = true, j.UID, sources, j.Created
	p.Class, p.Reason = ClassPast, j.Status+" Job "+why
	if ips > 0 {
		p.Reason += fmt.Sprintf("; its pods hold %d subnet address(es)", ips)
	}
	return p
}

// history says which Jobs are among the newest successfulJobsHistoryLimit
// (or failedJobsHistoryLimit) of their CronJob: the CronJob controller
// trims those itself.
// history is what the CronJobs' history limits keep of a cluster's Jobs.
type history struct {
	keep   map[string]string    // by Job UID: why it is kept
	pushed map[string]time.Time // by Job UID, out of history: since when (as far as the listing shows)
	key    map[string]string    // by Job UID: its CronJob and limits, as a listing suffix
}

// cronKey names a Job's CronJob and its history limits (defaults when the
// CronJob is not listed).
func cronKey(j *inventory.Job, limits map[string]*inventory.CronJob) string {
	if cj := limits[j.CronJob.UID]; cj != nil {
		return fmt.Sprintf("cronjob:%s/%d/%d", cj.UID, cj.SuccessfulLimit, cj.FailedLimit)
	}
	return "cronjob:" + j.CronJob.UID + "/3/1"
}

func cronLimits(c *inventory.ClusterRefs) map[string]*inventory.CronJob {
	limits := map[string]*inventory.CronJob{}
	for i := range c.CronJobs {
		limits[c.CronJobs[i].UID] = &c.CronJobs[i]
	}
	return limits
}

// cronListings names a listing per CronJob of the cluster's finished Jobs.
func (k *Kind) cronListings(c *inventory.ClusterRefs) []string {
	if !k.Policy.KeepCronJobHistory {
		return nil
	}
	limits, seen := cronLimits(c), map[string]bool{}
	var out []string
	for i := range c.Jobs {
		if j := &c.Jobs[i]; j.CronJob != nil && j.Done() {
			if key := cronKey(j, limits); !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}

func (k *Kind) history(c *inventory.ClusterRefs) history {
	h := history{keep: map[string]string{}, pushed: map[string]time.Time{}, key: map[string]string{}}
	if !k.Policy.KeepCronJobHistory {
		return h
	}
	limits := cronLimits(c)
	type key struct {
		uid    string
		status string
	}
	groups := map[key][]*inventory.Job{}
	for i := range c.Jobs {
		j := &c.Jobs[i]
		if j.CronJob != nil && j.Done() {
			k := key{j.CronJob.UID, j.Status}
			groups[k] = append(groups[k], j)
		}
	}
	for g, jobs := range groups {
		cj := limits[g.uid]
		limit, which := int32(3), "successfulJobsHistoryLimit"
		if g.status == "Failed" {
			limit, which = 1, "failedJobsHistoryLimit"
		}
		if cj != nil {
			limit = cj.SuccessfulLimit
			if g.status == "Failed" {
				limit = cj.FailedLimit
			}
		}
		sort.Slice(jobs, func(a, b int) bool {
			if !jobs[a].Created.Equal(jobs[b].Created) {
				return jobs[a].Created.After(jobs[b].Created)
			}
			return jobs[a].Name > jobs[b].Name
		})
		// A Job left the history when the limit-th of the newer ones
		// finished: the limit-th earliest finish among them (those the
		// listing no longer shows could only have made it earlier).
		var earliest []time.Time // the limit earliest finishes of the newer Jobs, sorted
		for i, j := range jobs {
			h.key[j.UID] = cronKey(j, limits)
			if i < int(limit) {
				h.keep[j.UID] = fmt.Sprintf("one of the newest %d %s Jobs of CronJob %s (%s)", limit, strings.ToLower(g.status), j.CronJob.Name, which)
			} else if limit > 0 {
				h.pushed[j.UID] = earliest[limit-1]
			}
			if limit > 0 {
				at, _ := slices.BinarySearchFunc(earliest, j.Finished, func(a, b time.Time) int { return a.Compare(b) })
				earliest = slices.Insert(earliest, at, j.Finished)
				if len(earliest) > int(limit) {
					earliest = earliest[:limit]
				}
			}
		}
	}
	return h
}

// ipsByJob counts the subnet (IPv4) addresses each Job's pods hold.
func ipsByJob(c *inventory.ClusterRefs) map[string]int {
	out := map[string]int{}
	for i := range c.Pods {
		p := &c.Pods[i]
		if p.Owner != nil && p.Owner.Kind == "Job" && !p.Terminating {
			out[p.Owner.UID] += finished.IPv4s(p.IPs)
		}
	}
	return out
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
