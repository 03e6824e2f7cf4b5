// Package config loads reclaim's configuration: one YAML file, decoded
// strictly, with defaults filled in one place and every problem reported with
// the path of the field it is about. reclaim deletes things in production, so
// anything doubtful in the file is an error, not a guess.
//
// The package lives in configs/, beside the example configurations, so its
// import path is reclaim.dev/reclaim/configs; importers name it config.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"time"
)

// Config is the whole configuration file.
type Config struct {
	// Clusters are asked which disks they use; at least one is required.
	Clusters   []Cluster  `json:"clusters"`
	Kubernetes Kubernetes `json:"kubernetes"`
	State      State      `json:"state"`
	Audit      Audit      `json:"audit"`
	// Notify is nil when the file has no notify section: nothing is delivered.
	Notify *Notify `json:"notify,omitempty"`

	// Fleet is how clusters are discovered; see Fleet.
	Fleet Fleet `json:"fleet"`

	// Prices turn what the plan frees into money a month.
	Prices Prices `json:"prices"`

	// Daemon is nil when the file has no daemon section: `reclaim daemon`
	// then runs with DefaultDaemon.
	Daemon *Daemon `json:"daemon,omitempty"`

	// Warnings are what the file should change though it works as it is
	// (a key's old name): the run logs each and its reports list them.
	Warnings []string `json:"-"`

	// present holds the YAML paths the file set; see applyDefaults.
	present map[string]bool
	// sections are the registered kinds' sections the file has, by key
	// (see Register and SectionOf).
	sections map[string]any
}

// Cluster is one Kubernetes cluster whose volumes keep disks alive.
type Cluster struct {
	Name string `json:"name"`
	// CloudName is the cluster's name in GKE or EKS when it differs from
	// Name: cloud evidence (subnet tags, discovery) names it so.
	CloudName string `json:"cloudName,omitempty"`
	// Platform, Account (EKS), Project (GKE) and Location (an EKS region, a
	// GKE zone or region) say where the cluster lives. Optional: a
	// discovered cluster of the same cloud name is this one when their API
	// servers (or CAs) agree, or, where those cannot be compared (inCluster,
	// a kubeconfig that cannot be loaded), when these agree. A same-name
	// cluster that cannot be told apart is a conflict, and holds.
	Platform string `json:"platform,omitempty"`
	Account  string `json:"account,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"`
	// Kubeconfig is a kubeconfig path with ~ expanded. Empty, with InCluster
	// false, means client-go's default loading rules ($KUBECONFIG, ~/.kube/config).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	InCluster  bool   `json:"inCluster"`
	// GCEProjects are the projects whose disks this cluster's volumes may
	// reference; empty means any project.
	GCEProjects []string `json:"gceProjects"`
	// AWSAccounts are the accounts whose ECR images this cluster may pull;
	// empty means any account.
	AWSAccounts []string `json:"awsAccounts"`
	// AWSSubnets are the EC2 subnets this cluster's pods and nodes may use;
	// empty means any subnet.
	AWSSubnets []string `json:"awsSubnets"`
	Timeout    Duration `json:"timeout"`
	QPS        float32  `json:"qps"`
	Burst      int      `json:"burst"`
	PageSize   int64    `json:"pageSize"`
}

// Caps bound what one kind deletes per run.
type Caps struct {
	MaxDeletesPerRun int     `json:"maxDeletesPerRun"`
	MaxDeletePercent Percent `json:"maxDeletePercent"`
	// MaxDeleteSizePerRun of 0 means no size cap.
	MaxDeleteSizePerRun Size `json:"maxDeleteSizePerRun"`
	BreakerCandidates   int  `json:"breakerCandidates"`
}

// Kubernetes holds settings for the objects reclaim reads from clusters.
type Kubernetes struct {
	ProtectLabel string `json:"protectLabel"`
}

// State is where first-seen times are kept: exactly one of File and ConfigMap.
type State struct {
	File      string        `json:"file,omitempty"`
	ConfigMap *ConfigMapRef `json:"configMap,omitempty"`
}

// ConfigMapRef names a ConfigMap; empty Kubeconfig means in-cluster.
type ConfigMapRef struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
}

// Audit is where every decision is written as JSON lines.
type Audit struct {
	// File is a path, or "-" for standard output.
	File string `json:"file"`
}

// Load reads and checks the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := readLimited(path, MaxFileSize)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{Source: path, Problems: []Problem{{Message: "cannot read the configuration file: " + err.Error()}}}
	}
	return Parse(data, path)
}

// MaxFileSize bounds a configuration file: a fleet of a thousand clusters
// needs a few hundred KiB, and a file far larger (a log or a binary given by
// mistake) is refused at once instead of parsed for minutes.
const MaxFileSize = 4 << 20

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d MiB, which no configuration needs: is it the right file?", limit>>20)
	}
	return data, nil
}

// Parse checks a configuration; source names it in error messages.
func Parse(data []byte, source string) (*Config, error) {
	tree, ps := parseTree(data)
	if ps != nil {
		return nil, &Error{Source: source, Problems: ps}
	}
	d := newDecoder()
	c := &Config{}
	d.rename(tree)
	d.decode("", tree, reflect.ValueOf(c).Elem())
	if d.failed[""] {
		return nil, &Error{Source: source, Problems: d.list}
	}
	// The kinds' sections after the global keys, in registration order:
	// their problems are listed in the same order at every stage.
	c.decodeSections(d, tree)
	c.present = d.present
	c.applyDefaults()
	c.sectionDefaults()
	v := problems{written: d.written, renamed: d.renamed}
	c.normalize(&v)
	c.normalizeSections(&v)
	c.validate(&v)
	c.validateSections(&v)
	c.crossValidate(&v)
	c.checkSections(&v)
	all := d.list
	for _, p := range v.list {
		if !failedUnder(d.failed, p.Path) {
			all = append(all, p)
		}
	}
	if len(all) > 0 {
		return nil, &Error{Source: source, Problems: all}
	}
	c.Warnings = d.warnings
	return c, nil
}

// failedUnder reports whether path is at or inside a path that failed to decode.
func failedUnder(failed map[string]bool, path string) bool {
	for f := range failed {
		if under(path, f) {
			return true
		}
	}
	return false
}

// Default values, for fields the file leaves out. reference.yaml shows
// them (configs TestReferenceShowsTheDefaults), and docs/configuration.md
// is rendered from it.
const (
	defaultClusterTimeout   = Duration(2 * time.Minute)
	defaultClusterQPS       = float32(20)
	defaultClusterBurst     = 40
	defaultClusterPageSize  = int64(500)
	defaultKubeProtectLabel = "reclaim.dev/protect"
	defaultStateFile        = "reclaim-state.json"
	defaultAuditFile        = "reclaim-audit.jsonl"
)

// def sets *field to value unless the file set the key at path. A key the
// file sets explicitly, even to 0 or [], is kept and validated as written.
func def[T any](c *Config, path string, field *T, value T) {
	if !c.present[path] {
		*field = value
	}
}

// applyDefaults fills in every field the file left out. It is the only place
// defaults are applied.
func (c *Config) applyDefaults() {
	for i := range c.Clusters {
		cl, p := &c.Clusters[i], index("clusters", i)
		def(c, p+".timeout", &cl.Timeout, defaultClusterTimeout)
		def(c, p+".qps", &cl.QPS, defaultClusterQPS)
		def(c, p+".burst", &cl.Burst, defaultClusterBurst)
		def(c, p+".pageSize", &cl.PageSize, defaultClusterPageSize)
	}
	c.daemonDefaults()
	c.fleetDefaults()
	def(c, "kubernetes.protectLabel", &c.Kubernetes.ProtectLabel, defaultKubeProtectLabel)
	if c.State.File == "" && c.State.ConfigMap == nil {
		c.State.File = defaultStateFile
	}
	def(c, "audit.file", &c.Audit.File, defaultAuditFile)
	c.notifyDefaults()
	c.pricesDefaults()
}

// normalize expands ~ in every path field.
func (c *Config) normalize(ps *problems) {
	expand := func(path string, p *string) {
		v, err := expandHome(*p)
		if err != nil {
			ps.add(path, "%v", err)
			return
		}
		*p = v
	}
	for i := range c.Clusters {
		expand(index("clusters", i)+".kubeconfig", &c.Clusters[i].Kubeconfig)
	}
	if c.Daemon != nil {
		c.Daemon.normalize(ps)
	}
	c.Fleet.normalize(ps)
	expand("state.file", &c.State.File)
	if c.State.ConfigMap != nil {
		expand("state.configMap.kubeconfig", &c.State.ConfigMap.Kubeconfig)
	}
	if c.Audit.File != "-" {
		expand("audit.file", &c.Audit.File)
	}
	if c.Notify != nil {
		c.Notify.normalize(ps)
	}
}
