// Package perms declares what reclaim needs from the clouds and clusters it
// reads: IAM actions, GCP permissions and Kubernetes RBAC rules. Each kind and
// each shared read declares its own Set next to its code; a test compares
// their union with what deploy/ grants, so that the policies, roles and RBAC
// there follow the code.
package perms

import (
	"slices"
	"strings"
)

// Set is what one kind or shared read needs, split the way deploy/ splits
// its grants: Read is what every run needs, dry runs included (the read-only
// IAM policy and GCP role, base RBAC); Delete is added only for --apply (the
// full policy and role, the deleter RBAC components).
type Set struct {
	Read   Grants
	Delete Grants
	// Outside are IAM actions the code may call that deploy/'s policies
	// leave out on purpose: sts:AssumeRole on a configured roleARN, which
	// the user grants per role (deploy/README.md).
	Outside []string
}

// Grants are one side of a Set.
type Grants struct {
	IAM  []string // AWS IAM actions, "ec2:DescribeSubnets"
	GCP  []string // GCP IAM permissions, "compute.disks.get"
	RBAC []Rule
}

// Rule is a Kubernetes RBAC rule on one resource.
type Rule struct {
	Group    string // API group, "" for core
	Resource string // plural, "persistentvolumeclaims"
	Verbs    []string
}

// Union merges sets; the result's lists are sorted and without duplicates.
func Union(sets ...Set) Set {
	var out Set
	for _, s := range sets {
		out.Read = out.Read.add(s.Read)
		out.Delete = out.Delete.add(s.Delete)
		out.Outside = append(out.Outside, s.Outside...)
	}
	out.Read = out.Read.tidy()
	out.Delete = out.Delete.tidy()
	out.Outside = sorted(out.Outside)
	return out
}

// All is Read and Delete together: what an install with --apply needs.
func (s Set) All() Grants {
	return s.Read.add(s.Delete).tidy()
}

func (g Grants) add(o Grants) Grants {
	return Grants{
		IAM:  append(slices.Clone(g.IAM), o.IAM...),
		GCP:  append(slices.Clone(g.GCP), o.GCP...),
		RBAC: append(slices.Clone(g.RBAC), o.RBAC...),
	}
}

func (g Grants) tidy() Grants {
	return Grants{IAM: sorted(g.IAM), GCP: sorted(g.GCP), RBAC: g.RBAC}
}

// RBACLines flattens the RBAC rules to one sorted line per verb and
// resource, "list pods", "delete jobs.batch": the form deploy/'s rules are
// compared in (resourceNames narrow a rule further and are not compared).
func (g Grants) RBACLines() []string {
	var out []string
	for _, r := range g.RBAC {
		for _, v := range r.Verbs {
			out = append(out, Line(r.Group, r.Resource, v))
		}
	}
	return sorted(out)
}

// Line is one verb on one resource, as RBACLines writes it.
func Line(group, resource, verb string) string {
	if group != "" {
		resource += "." + group
	}
	return verb + " " + resource
}

// Diff compares what is declared with what is granted: missing are
// declared and not granted, extra granted and not declared.
func Diff(declared, granted []string) (missing, extra []string) {
	d, g := sorted(declared), sorted(granted)
	for _, x := range d {
		if !slices.Contains(g, x) {
			missing = append(missing, x)
		}
	}
	for _, x := range g {
		if !slices.Contains(d, x) {
			extra = append(extra, x)
		}
	}
	return missing, extra
}

// Minus is a without the lines of b.
func Minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// Join is a short form of a list for messages.
func Join(xs []string) string { return strings.Join(xs, ", ") }

// Cloud are the IAM actions and GCP permissions of Read, Delete and
// Outside together: every cloud permission a call may need.
func (s Set) Cloud() []string {
	all := s.All()
	return sorted(append(append(all.IAM, all.GCP...), s.Outside...))
}
