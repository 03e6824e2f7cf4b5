package finished

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Detail is what a Job or Pod decision says beyond the envelope.
type Detail struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
	Status    string `json:"status"` // Complete, Failed, Succeeded
	// Job and CronJob name the owners, when there are.
	Job     string `json:"job,omitempty"`
	CronJob string `json:"cronJob,omitempty"`
	// IPs counts the subnet addresses its pods hold (Fargate: one each).
	IPs int `json:"ips,omitempty"`
	// Retention is the retention annotation's value when planned.
	Retention string `json:"retention,omitempty"`
	// Labels are what the collector kept of its labels (the owner label,
	// or all for a selector), and NamespaceLabels its namespace's (the
	// owner label), for routing (Where).
	Labels          map[string]string `json:"-"`
	NamespaceLabels map[string]string `json:"-"`
}

var _ engine.Located = (*Detail)(nil) // routed by notify.routes

// Where is the object's cluster and namespace.
func (d *Detail) Where() engine.Where {
	return engine.Where{Cluster: d.Cluster, Namespace: d.Namespace, Labels: d.Labels, NamespaceLabels: d.NamespaceLabels}
}

// DetailOf returns a decision's detail.
func DetailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// Objects reads and deletes one resource in one namespace: client-go's
// typed clients (JobInterface, PodInterface…) are Objects.
type Objects[T any] interface {
	Get(ctx context.Context, name string, o metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, o metav1.DeleteOptions) error
}

// API reads and deletes one resource (jobs or pods) of a cluster.
type API[T metav1.Object] struct {
	// Resource names it in errors: "job", "pod".
	Resource string
	// In is the resource's client in namespace ns of cs
	// (cs.BatchV1().Jobs(ns)).
	In func(cs kubernetes.Interface, ns string) Objects[T]
	// Propagation is the delete's propagationPolicy (Background for Jobs:
	// a batch/v1 delete without one orphans the pods).
	Propagation *metav1.DeletionPropagation
	// Still, if set, re-checks a re-read object: "" when it may still go,
	// else why not.
	Still func(T) string
}

// Target is where a decision's Kubernetes object lives and what the plan
// saw of it: the UID it may delete, the retention annotation's value.
type Target struct {
	Cluster, Namespace, UID, Retention string
}

// Deleter re-reads and deletes through each cluster's client, paced per
// cluster by DeletesPerSecond.
type Deleter[T metav1.Object] struct {
	API    API[T]
	Client func(cluster string) (kubernetes.Interface, error)
	// PerSecond paces the calls (re-reads and deletes) per cluster.
	PerSecond float64
	// Annotation is the retention annotation: a value changed since the
	// plan (someone asked to keep it longer) is a skip.
	Annotation string
	// Parallel is how many objects of a batch are re-read or deleted at
	// once (0: 8); PerSecond still paces them. One at a time, an API
	// server 30 ms away allows some 15 deletes a second, whatever the rate.
	Parallel int
	// Target, if set, says where a decision's object is; by default its
	// Detail (a finished Job's or Pod's).
	Target func(d *engine.Decision) Target

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func (k *Deleter[T]) object(d *engine.Decision) Target {
	if k.Target != nil {
		return k.Target(d)
	}
	det := DetailOf(d)
	return Target{Cluster: det.Cluster, Namespace: det.Namespace, UID: det.UID, Retention: det.Retention}
}

func (k *Deleter[T]) client(ctx context.Context, cluster string) (kubernetes.Interface, error) {
	if k.Client == nil {
		return nil, fmt.Errorf("no client for cluster %s", cluster)
	}
	k.mu.Lock()
	if k.limiters == nil {
		k.limiters = map[string]*rate.Limiter{}
	}
	l := k.limiters[cluster]
	if l == nil {
		l = rate.NewLimiter(rate.Inf, 1)
		if k.PerSecond > 0 {
			l = rate.NewLimiter(rate.Limit(k.PerSecond), max(1, int(k.PerSecond)))
		}
		k.limiters[cluster] = l
	}
	k.mu.Unlock()
	if err := l.Wait(ctx); err != nil {
		return nil, err
	}
	// The batch's calls run in parallel; Client need not be safe for that.
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.Client(cluster)
}

// Recheck re-reads each object: gone or terminating is gone; another UID
// (recreated), a changed retention annotation, or what Still says since the
// plan is a skip. The engine checks the opt-out label in what it saw.
func (k *Deleter[T]) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	out := make([]engine.Verdict, len(batch))
	err := k.each(ctx, batch, func(ctx context.Context, i int, cs kubernetes.Interface) error {
		d, det := batch[i], k.object(batch[i])
		cur, err := k.API.In(cs, det.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out[i].Result = engine.GoneNow
		case err != nil:
			return fmt.Errorf("%s %s/%s in %s: %w", k.API.Resource, det.Namespace, d.Name, det.Cluster, err)
		case string(cur.GetUID()) != det.UID:
			out[i] = engine.Verdict{Result: engine.Skip, Reason: fmt.Sprintf("skipped: recreated since it was planned (uid %s, planned %s)", cur.GetUID(), det.UID)}
		case cur.GetDeletionTimestamp() != nil:
			out[i].Result = engine.GoneNow
		case k.Annotation != "" && cur.GetAnnotations()[k.Annotation] != det.Retention:
			out[i] = engine.Verdict{Result: engine.Skip, Reason: fmt.Sprintf("skipped: annotation %s changed since it was planned (now %q)", k.Annotation, cur.GetAnnotations()[k.Annotation])}
		default:
			out[i] = engine.Pass(cur.GetLabels()) // the engine checks the opt-out label
			if k.API.Still != nil {
				if why := k.API.Still(cur); why != "" {
					out[i] = engine.Verdict{Result: engine.Skip, Reason: "skipped: " + why}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each runs f for every object of a batch, with its cluster's client
// (paced), Parallel at once, and starts none after one failed (the whole
// batch then fails: its results are not used). The first error (in batch
// order) is returned once every call has ended: a call in flight is never
// abandoned.
func (k *Deleter[T]) each(ctx context.Context, batch []*engine.Decision, f func(ctx context.Context, i int, cs kubernetes.Interface) error) error {
	n := len(batch)
	par := k.Parallel
	if par <= 0 {
		par = 8
	}
	errs := make([]error, n)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i := range n {
		sem <- struct{}{}
		if failed.Load() {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			cs, err := k.client(ctx, k.object(batch[i]).Cluster)
			if err == nil {
				err = f(ctx, i, cs)
			}
			if errs[i] = err; err != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Delete deletes each object only if it is still the one planned (a UID
// precondition: one recreated since the re-read is refused, a skip).
func (k *Deleter[T]) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	out := make([]engine.Deleted, len(batch))
	err := k.each(ctx, batch, func(ctx context.Context, i int, cs kubernetes.Interface) error {
		d, det := batch[i], k.object(batch[i])
		uid := types.UID(det.UID)
		err := k.API.In(cs, det.Namespace).Delete(ctx, d.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: k.API.Propagation})
		out[i].Err = kube.DeleteError(err, fmt.Sprintf("%s %s/%s in %s", k.API.Resource, det.Namespace, d.Name, det.Cluster))
		if outcome.Of(out[i].Err) == outcome.Unknown {
			return out[i].Err // no answer: the batch fails, its pending marks stay
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// IPv4s counts the IPv4 addresses among a pod's: those are what a subnet's
// address space loses (an IPv6 address costs it nothing).
func IPv4s(ips []string) int {
	n := 0
	for _, ip := range ips {
		if !strings.Contains(ip, ":") {
			n++
		}
	}
	return n
}

// Base is what the Job and Pod kinds share beside Propose and View: their
// names (Name, Owns, ID), their limits, and the one Kubernetes delete path
// (Recheck, Delete). A kind embeds the *Base that NewBase makes.
type Base[T metav1.Object] struct {
	Names
	section, one string
	batch        int
	policy       *Policy
	del          *Deleter[T]
}

// NewBase makes a kind's Base: its config section and what one object is
// called ("jobs", "Job"), its batch size, its retention policy (the kind's
// own, by pointer: one policy, not a copy), and its deleter over api, paced,
// protected and annotated as the policy says.
func NewBase[T metav1.Object](n Names, section, one string, batch int, p *Policy, client func(cluster string) (kubernetes.Interface, error), api API[T]) *Base[T] {
	return &Base[T]{Names: n, section: section, one: one, batch: batch, policy: p,
		del: &Deleter[T]{Client: client, PerSecond: p.DeletesPerSecond, Annotation: p.Annotation, API: api}}
}

// Limits are the kind's, from its section.
func (b *Base[T]) Limits() engine.Limits { return b.policy.Limits(b.section, b.one, b.batch) }

// OptOut says how a person keeps one of the kind's resources
// (report.OptOuter).
func (b *Base[T]) OptOut() string { return optOut(b.policy.ProtectLabel, b.policy.Annotation, b.one) }

// Recheck re-reads each object right before it is deleted.
func (b *Base[T]) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	return b.del.Recheck(ctx, batch)
}

// Delete deletes each object with a UID precondition (and the API's
// propagation).
func (b *Base[T]) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	return b.del.Delete(ctx, batch)
}

// Latest is the later of a and b.
func Latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
