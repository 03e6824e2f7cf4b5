package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	gceProjectID = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	gceLabelKey  = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	cloudName    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	clusterHint  = "use lowercase letters, digits and '-', at most 63 characters, starting and ending with a letter or digit"
	projectHint  = "6 to 30 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen"
	gceLabelHint = "use lowercase letters, digits, '_' and '-', starting with a letter"
	maxPageSize  = int64(10000)
	maxTimeout   = Duration(time.Hour)
)

// isDNSLabel: at most 63 lowercase letters, digits and dashes, a letter or
// digit at each end.
func isDNSLabel(s string) bool { return len(s) <= 63 && dnsLabel.MatchString(s) }

// validate checks each field on its own.
func (c *Config) validate(ps *problems) {
	if len(c.Clusters) == 0 && !c.Fleet.Discovers() {
		ps.add("clusters", "at least one cluster is required — reclaim never deletes without asking a cluster what it uses; list them, or let fleet discovery find them (fleet.discover with fleet.gke.projects or fleet.eks)")
	}
	for i := range c.Clusters {
		c.Clusters[i].validate(ps, index("clusters", i), c.present)
	}
	if c.Daemon != nil {
		c.Daemon.validate(ps, "daemon")
	}
	c.Prices.validate(ps, "prices")
	if c.Kubernetes.ProtectLabel == "" {
		ps.add("kubernetes.protectLabel", "must not be empty — it is how a PV or PVC opts out")
	} else if errs := content.IsLabelKey(c.Kubernetes.ProtectLabel); len(errs) > 0 {
		ps.add("kubernetes.protectLabel", "%q is not a valid Kubernetes label key — %s", c.Kubernetes.ProtectLabel, strings.Join(errs, "; "))
	}
	c.Fleet.validate(ps, "fleet", c.present)
	c.State.validate(ps, "state")
	if c.Audit.File == "" {
		ps.add("audit.file", "must not be empty — write a path, or - for standard output")
	}
	if c.Notify != nil {
		c.Notify.validate(ps, "notify")
	}
}

func (cl *Cluster) validate(ps *problems, path string, present map[string]bool) {
	switch {
	case cl.Name == "":
		ps.add(path+".name", "is required — a short name such as prod-a")
	case !isDNSLabel(cl.Name):
		ps.add(path+".name", "%q is not a valid cluster name — %s", cl.Name, clusterHint)
	}
	if cl.CloudName != "" && (len(cl.CloudName) > 100 || !cloudName.MatchString(cl.CloudName)) {
		ps.add(path+".cloudName", "%q is not a GKE or EKS cluster name — letters, digits, '-' and '_', at most 100 characters", cl.CloudName)
	}
	validatePlace(ps, path, cl.Platform, cl.Account, cl.Project, cl.Location)
	if cl.Kubeconfig != "" && cl.InCluster {
		ps.add(path, "set either kubeconfig or inCluster, not both")
	}
	if cl.Context != "" && cl.InCluster {
		ps.add(path, "set either context or inCluster, not both — inCluster uses the pod's own service account")
	}
	validateList(ps, path+".gceProjects", cl.GCEProjects, validateProject)
	validateList(ps, path+".awsAccounts", cl.AWSAccounts, func(a string) string {
		if !awsAccount.MatchString(a) {
			return fmt.Sprintf("%q is not an AWS account id — %s", a, accountHint)
		}
		return ""
	})
	validateClusterLimits(ps, path, cl.Timeout, cl.QPS, cl.Burst, cl.PageSize, present)
}

// validateClusterLimits checks how a cluster is read: clusters[] and the
// fleet's discovered clusters share the rules.
func validateClusterLimits(ps *problems, path string, timeout Duration, qps float32, burst int, pageSize int64, present map[string]bool) {
	switch {
	case timeout <= 0:
		ps.add(path+".timeout", "must be more than 0")
	case timeout > maxTimeout:
		ps.add(path+".timeout", "%s is more than the %s maximum", timeout, maxTimeout)
	}
	if qps <= 0 {
		ps.add(path+".qps", "must be more than 0")
	} else if float64(burst) < float64(qps) {
		if present[path+".burst"] {
			ps.add(path+".burst", "%d is less than qps (%g) — burst must be at least qps", burst, qps)
		} else {
			ps.add(path+".burst", "the default of %d is less than qps (%g) — set burst to at least qps", burst, qps)
		}
	}
	if pageSize < 1 || pageSize > maxPageSize {
		ps.add(path+".pageSize", "%d is out of range — use 1 to %d", pageSize, maxPageSize)
	}
}

func (s *State) validate(ps *problems, path string) {
	if s.File != "" && s.ConfigMap != nil {
		ps.add(path, "set either file or configMap, not both")
	}
	if cm := s.ConfigMap; cm != nil {
		p := path + ".configMap"
		if cm.Namespace == "" {
			ps.add(p+".namespace", "is required")
		} else if errs := content.IsDNS1123Label(cm.Namespace); len(errs) > 0 {
			ps.add(p+".namespace", "%q is not a valid namespace — %s", cm.Namespace, strings.Join(errs, "; "))
		}
		if cm.Name == "" {
			ps.add(p+".name", "is required")
		} else if errs := content.IsDNS1123Subdomain(cm.Name); len(errs) > 0 {
			ps.add(p+".name", "%q is not a valid ConfigMap name — %s", cm.Name, strings.Join(errs, "; "))
		}
	}
}

// validateList checks each item with check (which returns a message or "") and
// reports items listed twice.
func validateList(ps *problems, path string, items []string, check func(string) string) {
	first := map[string]int{}
	for i, it := range items {
		if msg := check(it); msg != "" {
			ps.add(index(path, i), "%s", msg)
		}
		if j, dup := first[it]; dup {
			ps.add(path, "%q is listed twice (%s and %s)", it, index(path, j), index(path, i))
			continue
		}
		first[it] = i
	}
}

func validateProject(p string) string {
	if !gceProjectID.MatchString(p) {
		return fmt.Sprintf("%q is not a valid GCE project id — %s", p, projectHint)
	}
	return ""
}

func gceLabelKeyProblem(k string) string {
	if !gceLabelKey.MatchString(k) {
		return fmt.Sprintf("%q is not a valid GCE label key — %s", k, gceLabelHint)
	}
	return ""
}

func validateGCELabelKey(ps *problems, path, key string) {
	if key == "" {
		ps.add(path, "must not be empty — a GCE label key such as reclaim-protect")
	} else if msg := gceLabelKeyProblem(key); msg != "" {
		ps.add(path, "%s", msg)
	}
}

// crossValidate checks the rules that tie fields together, the ones whose
// mistakes would make a disk in use look orphaned.
func (c *Config) crossValidate(ps *problems) {
	c.crossValidateFleet(ps)
	c.crossValidateRecords(ps)
	// Names are unique.
	byName := map[string][]int{}
	var names []string
	for i, cl := range c.Clusters {
		if cl.Name == "" {
			continue
		}
		if _, ok := byName[cl.Name]; !ok {
			names = append(names, cl.Name)
		}
		byName[cl.Name] = append(byName[cl.Name], i)
	}
	for _, n := range names {
		if idx := byName[n]; len(idx) > 1 {
			ps.add("clusters", "name %q is used %s (%s)", n, times(len(idx)), andList(indexes("clusters", idx)))
		}
	}

	// Each entry reaches a different cluster: two entries with the same
	// kubeconfig and context ask one cluster twice and never ask the other, whose
	// disks would then all look orphaned.
	type target struct {
		inCluster           bool
		kubeconfig, context string
	}
	seen := map[target]int{}
	var inCluster []int
	for i, cl := range c.Clusters {
		if cl.InCluster {
			inCluster = append(inCluster, i)
			continue
		}
		if c.Fleet.Records != nil {
			continue // read from records, found by place and name (crossValidateRecords)
		}
		t := target{kubeconfig: cl.Kubeconfig, context: cl.Context}
		if j, ok := seen[t]; ok {
			ps.add(index("clusters", i), "same kubeconfig and context as %s — each entry must reach a different cluster, or that cluster's disks would look orphaned", index("clusters", j))
			continue
		}
		seen[t] = i
	}
	if len(inCluster) > 1 {
		ps.add("clusters", "inCluster is set on %s — only the cluster reclaim runs in can use it", andList(indexes("clusters", inCluster)))
	}

	c.crossValidateEC2(ps)
}

func indexes(path string, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = index(path, j)
	}
	return out
}

func times(n int) string {
	if n == 2 {
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
