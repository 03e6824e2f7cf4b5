// Package finished holds what the finished-Jobs and finished-Pods kinds
// share: retention as policy (per outcome, overridden by an annotation),
// which namespaces and labels are in scope, the counts every run reports,
// and the re-read and delete through a cluster's API with a UID
// precondition, paced so the API server is never starved.
package finished

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Policy is a jobs or pods section.
type Policy struct {
	Succeeded, Failed time.Duration
	Include, Exclude  []*regexp.Regexp
	Selector          labels.Selector // nil matches everything
	Annotation        string
	ProtectLabel      string
	// Safety is the section's: grace, the caps and the breaker.
	config.Safety
	DeletesPerSecond float64
}

// PolicyFrom reads a validated jobs or pods section.
func PolicyFrom(r *Retention, protectLabel string) Policy {
	p := Policy{Succeeded: r.Succeeded.Std(), Failed: r.Failed.Std(), Annotation: r.RetentionAnnotation, ProtectLabel: protectLabel,
		Safety: r.Safety, DeletesPerSecond: r.DeletesPerSecond}
	for _, g := range r.Namespaces.Include {
		re, _ := config.GlobRegexp(g) // validated by config
		p.Include = append(p.Include, re)
	}
	for _, g := range r.Namespaces.Exclude {
		re, _ := config.GlobRegexp(g)
		p.Exclude = append(p.Exclude, re)
	}
	if r.Selector != "" {
		p.Selector, _ = labels.Parse(r.Selector)
	}
	return p
}

// Limits are the engine's parameters of a jobs or pods section; one names
// the resource for people ("Job").
func (p *Policy) Limits(section, one string, batch int) engine.Limits {
	l := kind.Limits(p.Safety, nil)
	l.BatchSize, l.OptOutKey = batch, p.ProtectLabel
	l.Wording = engine.Wording{Section: section, Noun: one + "s", Guarded: one + " of it"}
	return l
}

// optOut says how a Job or Pod is kept: the opt-out label, or the
// retention annotation "never".
func optOut(label, annotation, one string) string {
	if label == "" {
		return fmt.Sprintf("set the annotation %s=never on the %s", annotation, one)
	}
	return optout.Rule("label", label, one) + fmt.Sprintf(", or the annotation %s=never", annotation)
}

// InScope says whether an object of the namespace with the labels is the
// policy's to look at.
func (p *Policy) InScope(namespace string, lbls map[string]string) bool {
	for _, re := range p.Exclude {
		if re.MatchString(namespace) {
			return false
		}
	}
	if len(p.Include) > 0 {
		in := false
		for _, re := range p.Include {
			in = in || re.MatchString(namespace)
		}
		if !in {
			return false
		}
	}
	return p.Selector == nil || p.Selector.Matches(labels.Set(lbls))
}

// Classes of kept finished objects.
const (
	ClassRetained   = "retained"
	ClassNever      = "retention-never"
	ClassBadRetain  = "bad-annotation"
	ClassProtected  = "protected"
	ClassDeleting   = "deleting"
	ClassPast       = "past-retention"
	ClassNoFinished = "no-finish-time"
)

// Verdict is the retention's answer for one finished object.
type Verdict struct {
	// Keep: a keep class and its reason; "" when the object is past retention.
	Keep   string
	Reason string
	// Until is when the retention ends (zero for never or a bad annotation).
	Until time.Time
}

// Fingerprint names what makes an object a candidate under p (retention,
// scope, annotation, protect label), not its pacing.
func (p *Policy) Fingerprint() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%v|%s|%s|", p.Succeeded, p.Failed, p.Annotation, p.ProtectLabel)
	for _, re := range p.Include {
		fmt.Fprintf(h, "+%s", re)
	}
	for _, re := range p.Exclude {
		fmt.Fprintf(h, "-%s", re)
	}
	if p.Selector != nil {
		fmt.Fprintf(h, "|%s", p.Selector)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Retain decides one finished object: succeeded says which retention
// applies; annotation is the retention annotation's value ("" when absent).
func (p *Policy) Retain(succeeded bool, finished time.Time, annotation string, now time.Time) Verdict {
	d, src := p.Failed, "failed retention"
	if succeeded {
		d, src = p.Succeeded, "succeeded retention"
	}
	if annotation != "" {
		v, never, ok := config.ParseRetention(annotation)
		switch {
		case !ok:
			// A person meant to change the retention and got it wrong: keep
			// the object rather than guess which way they meant.
			return Verdict{Keep: ClassBadRetain, Reason: fmt.Sprintf("annotation %s=%q is not a duration (90m, 36h, 7d) or never; kept until it is fixed", p.Annotation, annotation)}
		case never:
			return Verdict{Keep: ClassNever, Reason: fmt.Sprintf("annotation %s=never", p.Annotation)}
		}
		d, src = v, "annotation "+p.Annotation
	}
	until := finished.Add(d)
	if now.Before(until) {
		return Verdict{Keep: ClassRetained, Until: until,
			Reason: fmt.Sprintf("finished %s, kept until %s (%s %s)", fmtTime(finished), fmtTime(until), src, config.Duration(d))}
	}
	return Verdict{Until: until, Reason: fmt.Sprintf("finished %s, past its %s %s", fmtTime(finished), src, config.Duration(d))}
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
