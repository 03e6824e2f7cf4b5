package config

import "fmt"

// Checks a kind's section shares with the global sections. Each takes a
// path inside the section, as Report.Add does.

// CheckAWSTarget checks the account and region to reach at path p, and
// the role assumed there.
func CheckAWSTarget(report *Report, p string, t AWSTarget) {
	validateAWSTarget(report.ps, report.Path(p), t)
}

// CheckEndpoint checks an endpoint override of an AWS service.
func CheckEndpoint(report *Report, p, endpoint, service string) {
	validateEndpoint(report.ps, report.Path(p), endpoint, service)
}

// CheckList checks each item with check (a message, or "" when it is
// fine) and reports items listed twice.
func CheckList(report *Report, p string, items []string, check func(string) string) {
	validateList(report.ps, report.Path(p), items, check)
}

// CheckSubnet says what is wrong with an EC2 subnet id, "" when nothing.
func CheckSubnet(s string) string { return checkSubnet(s) }

// Index is the path of a list's item: Index("networks", 2) is networks[2].
func Index(path string, i int) string { return index(path, i) }

// ExpandHome expands a leading ~ in a path.
func ExpandHome(p string) (string, error) { return expandHome(p) }

// AccountCoverage checks that some cluster may pull from each account at
// path[i].account (a registry of accounts[i]): with every cluster limited
// by awsAccounts, an account none lists would make everything there look
// unused.
func AccountCoverage(c *Config, report *Report, path string, accounts []string) {
	if c.Fleet.Discovers() && len(c.Fleet.EKS) > 0 {
		return // a discovered cluster may pull from any account
	}
	covered := map[string]bool{}
	for _, cl := range c.Clusters {
		if len(cl.AWSAccounts) == 0 {
			return
		}
		// A cluster may also pull from accounts reclaim does not trim (a
		// vendor's registry): those need not be listed in the section.
		for _, a := range cl.AWSAccounts {
			covered[a] = true
		}
	}
	for i, a := range accounts {
		if !covered[a] {
			report.Add(Index(path, i)+".account", "no cluster lists %q in awsAccounts, so every image there would look unused — add it to the awsAccounts of the clusters that pull from it", a)
		}
	}
}

// ProjectCoverage checks the clusters' gceProjects against the projects
// the section scans (at path): a cluster's gceProjects name scanned
// projects, and every scanned project is covered by some cluster:
// otherwise that project's disks would be checked against no cluster and
// all look orphaned.
func ProjectCoverage(c *Config, report *Report, path string, projects []string) {
	// A cluster's gceProjects name scanned projects, and every scanned project is
	// covered by some cluster: otherwise that project's disks would be checked
	// against no cluster and all look orphaned.
	scanned := map[string]bool{}
	for _, p := range projects {
		scanned[p] = true
	}
	covered := map[string]bool{}
	if c.Fleet.Discovers() {
		// A discovered GKE cluster references its own project's disks.
		for _, p := range c.Fleet.GKE.Projects {
			covered[p] = true
		}
	}
	anyProject := false
	for i, cl := range c.Clusters {
		if len(cl.GCEProjects) == 0 {
			anyProject = true
		}
		for j, p := range cl.GCEProjects {
			covered[p] = true
			if !scanned[p] && gceProjectID.MatchString(p) {
				msg := fmt.Sprintf("%q is not one of %s", p, report.Path(path))
				if s := closest(p, projects); s != "" {
					msg += fmt.Sprintf(" — did you mean %q?", s)
				}
				report.ps.add(index(index("clusters", i)+".gceProjects", j), "%s", msg)
			}
		}
	}
	if !anyProject {
		for i, p := range projects {
			if !covered[p] {
				if c.Fleet.Discover {
					report.Add(index(path, i), "no cluster lists %q in gceProjects and fleet discovery does not look there, so every disk there would look orphaned — add it to the gceProjects of the clusters that use it, or to fleet.gke.projects", p)
				} else {
					report.Add(index(path, i), "no cluster lists %q in gceProjects, so every disk there would look orphaned — add it to the gceProjects of the clusters that use it", p)
				}
			}
		}
	}
}

// CheckProject says what is wrong with a GCE project id, "" when nothing.
func CheckProject(p string) string { return validateProject(p) }

// CheckGCELabelKey checks a GCE label key at path.
func CheckGCELabelKey(report *Report, path, key string) {
	validateGCELabelKey(report.ps, report.Path(path), key)
}

// GCELabelKeyProblem says what is wrong with a GCE label key, "" when nothing.
func GCELabelKeyProblem(k string) string { return gceLabelKeyProblem(k) }
