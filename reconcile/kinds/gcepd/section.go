package gcepd

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	config "reclaim.dev/reclaim/configs"
)

// The config sections of the GCE disks: gce turns gce-disk on and says
// which projects the gce read lists; disks is gce-disk's policy (k8s-pvc
// waits its grace unless k8sPvcs says otherwise). Both register here, gce
// first.
const (
	GCEKey   = "gce"
	DisksKey = "disks"
)

// GCE is the gce section: which Compute Engine projects to look at and how.
// Absent, no GCE work is done.
type GCE struct {
	Projects []string `json:"projects"`
	// Regions is an allow-list; empty means every region.
	Regions []string `json:"regions"`
	// Zones is an allow-list of zones; empty means every zone. A regional disk
	// is in scope only if all its replica zones are listed.
	Zones                 []string `json:"zones"`
	Endpoint              string   `json:"endpoint,omitempty"`
	WithoutAuthentication bool     `json:"withoutAuthentication"`
	// CredentialsFile is a service-account key path with ~ expanded; empty means
	// Application Default Credentials.
	CredentialsFile string         `json:"credentialsFile,omitempty"`
	QuotaMetrics    []string       `json:"quotaMetrics"`
	HeadroomWarning config.Percent `json:"headroomWarning"`
	PageSize        int64          `json:"pageSize"`
	Concurrency     int            `json:"concurrency"`
}

// Disks is the disks section, the policy for orphaned disks. Every file
// has it, with its defaults when it leaves it out.
type Disks struct {
	// Safety: minAge, grace and the per-run caps (maxDeleteSizePerRun of 0
	// means no size cap). A disk's opt-out is a GCE label, ProtectLabel.
	config.Safety
	MinDetached          config.Duration `json:"minDetached"`
	ProtectLabel         string          `json:"protectLabel"`
	Ownership            Ownership       `json:"ownership"`
	SnapshotBeforeDelete bool            `json:"snapshotBeforeDelete"`
	SnapshotLabel        string          `json:"snapshotLabel"`
	SnapshotTimeout      config.Duration `json:"snapshotTimeout"`
}

// Ownership is the evidence that Kubernetes created a disk. A disk that
// matches none of it is never deleted.
type Ownership struct {
	LabelKeys           []string `json:"labelKeys"`
	DescriptionContains []string `json:"descriptionContains"`
}

// Defaults of the gce and disks sections. configs/reference.yaml shows
// them (configs TestReferenceShowsTheDefaults).
const (
	defaultGCEHeadroomWarning = config.Percent(0.85)
	defaultGCEPageSize        = int64(500)
	defaultGCEConcurrency     = 4
	defaultMinAge             = config.Duration(24 * time.Hour)
	// defaultGrace is in days: a disk is listed in several daily reports
	// before it goes (peers wait 7 to 30 days; a fleet short of quota
	// lowers it, as the demo does).
	defaultGrace               = config.Duration(7 * 24 * time.Hour)
	defaultMinDetached         = config.Duration(time.Hour)
	defaultDiskProtectLabel    = "reclaim-protect"
	defaultSnapshotLabel       = "reclaim-snapshot-of"
	defaultSnapshotTimeout     = config.Duration(30 * time.Minute)
	defaultMaxDeletesPerRun    = 20
	defaultMaxDeletePercent    = config.Percent(0.10)
	defaultMaxDeleteSizePerRun = config.Size(0)
	defaultBreakerCandidates   = 200
)

// Default list values; the defaults copy them.
var (
	defaultQuotaMetrics        = []string{"SSD_TOTAL_GB", "DISKS_TOTAL_GB"}
	defaultOwnershipLabelKeys  = []string{"goog-gke-volume"}
	defaultDescriptionContains = []string{"kubernetes.io/created-for/pv/name"}
)

var (
	gceRegion  = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	gceZone    = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-[a-z]$`)
	upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	maxPage    = int64(500)
	maxWorkers = 64
)

func init() {
	config.Register(config.SectionSpec[GCE]{
		Key: GCEKey, Doc: "lists GCE disks and quota of its projects (gce-disk)",
		Defaults: func(g *GCE, set func(string) bool) {
			config.Fill(set, "quotaMetrics", &g.QuotaMetrics, slices.Clone(defaultQuotaMetrics))
			config.Fill(set, "headroomWarning", &g.HeadroomWarning, defaultGCEHeadroomWarning)
			config.Fill(set, "pageSize", &g.PageSize, defaultGCEPageSize)
			config.Fill(set, "concurrency", &g.Concurrency, defaultGCEConcurrency)
		},
		Normalize: func(g *GCE, report *config.Report) {
			v, err := config.ExpandHome(g.CredentialsFile)
			if err != nil {
				report.Add("credentialsFile", "%v", err)
				return
			}
			g.CredentialsFile = v
		},
		Validate: validateGCE,
		Check: func(g *GCE, c *config.Config, report *config.Report) {
			config.ProjectCoverage(c, report, "projects", g.Projects)
		},
		// The GCE section's identity discovers its projects' clusters.
		GKE: func(g *GCE) config.GKEDiscovery {
			return config.GKEDiscovery{Projects: slices.Clone(g.Projects), CredentialsFile: g.CredentialsFile, WithoutAuthentication: g.WithoutAuthentication}
		},
	})
	config.Register(config.SectionSpec[Disks]{
		Key: DisksKey, Doc: "the orphaned-disk policy of gce-disk (k8s-pvc waits its grace)", Always: true,
		Safety: func(d *Disks) *config.Safety { return &d.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{Grace: defaultGrace, MinAge: defaultMinAge,
				Caps: config.Caps{MaxDeletesPerRun: defaultMaxDeletesPerRun, MaxDeletePercent: defaultMaxDeletePercent,
					MaxDeleteSizePerRun: defaultMaxDeleteSizePerRun, BreakerCandidates: defaultBreakerCandidates}},
			Without:   []string{config.KeyProtectTag},
			GraceWhy:  "a disk must be seen orphaned on more than one run before it is deleted",
			MinAgeWhy: "a disk being created would otherwise look orphaned",
		},
		Defaults: func(d *Disks, set func(string) bool) {
			config.Fill(set, "minDetached", &d.MinDetached, defaultMinDetached)
			config.Fill(set, "protectLabel", &d.ProtectLabel, defaultDiskProtectLabel)
			config.Fill(set, "ownership.labelKeys", &d.Ownership.LabelKeys, slices.Clone(defaultOwnershipLabelKeys))
			config.Fill(set, "ownership.descriptionContains", &d.Ownership.DescriptionContains, slices.Clone(defaultDescriptionContains))
			config.Fill(set, "snapshotLabel", &d.SnapshotLabel, defaultSnapshotLabel)
			config.Fill(set, "snapshotTimeout", &d.SnapshotTimeout, defaultSnapshotTimeout)
		},
		Validate: validateDisks,
	})
}

// GCEOf is the file's gce section, nil when it has none (no GCE work).
func GCEOf(cfg *config.Config) *GCE { return config.SectionOf[GCE](cfg, GCEKey) }

// DisksOf is the file's disks section, with its defaults when the file has none.
func DisksOf(cfg *config.Config) *Disks { return config.SectionOf[Disks](cfg, DisksKey) }

func validateGCE(g *GCE, report *config.Report) {
	if len(g.Projects) == 0 {
		report.Add("projects", "at least one project is required")
	}
	config.CheckList(report, "projects", g.Projects, config.CheckProject)
	config.CheckList(report, "regions", g.Regions, func(r string) string {
		if m := gceZone.FindStringSubmatch(r); m != nil {
			return fmt.Sprintf("%q is a zone — regions look like %s", r, m[1])
		}
		if !gceRegion.MatchString(r) {
			return fmt.Sprintf("%q is not a GCE region — regions look like us-central1 or europe-west4", r)
		}
		return ""
	})
	config.CheckList(report, "zones", g.Zones, func(z string) string {
		if gceRegion.MatchString(z) {
			return fmt.Sprintf("%q is a region — zones look like %s-a; put regions in gce.regions", z, z)
		}
		if !gceZone.MatchString(z) {
			return fmt.Sprintf("%q is not a GCE zone — zones look like us-central1-a or europe-west4-b", z)
		}
		return ""
	})
	if g.Endpoint != "" {
		u, err := url.Parse(g.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			report.Add("endpoint", "%q is not an absolute http(s) URL — write e.g. https://compute.example.internal/ or http://localhost:8080/", g.Endpoint)
		}
	} else if g.WithoutAuthentication {
		report.Add("withoutAuthentication", "only meaningful with endpoint (a fake or test server) — set gce.endpoint or remove this")
	}
	if g.WithoutAuthentication && g.CredentialsFile != "" {
		report.Add("", "set either credentialsFile or withoutAuthentication, not both")
	}
	config.CheckList(report, "quotaMetrics", g.QuotaMetrics, func(m string) string {
		if !upperSnake.MatchString(m) {
			return fmt.Sprintf("%q is not a quota metric name — they are UPPER_SNAKE_CASE, such as SSD_TOTAL_GB", m)
		}
		return ""
	})
	if g.PageSize < 1 || g.PageSize > maxPage {
		report.Add("pageSize", "%d is out of range — use 1 to %d (the API maximum)", g.PageSize, maxPage)
	}
	if g.Concurrency < 1 || g.Concurrency > maxWorkers {
		report.Add("concurrency", "%d is out of range — use 1 to %d", g.Concurrency, maxWorkers)
	}
}

func validateDisks(d *Disks, report *config.Report) {
	config.CheckGCELabelKey(report, "protectLabel", d.ProtectLabel)
	config.CheckList(report, "ownership.labelKeys", d.Ownership.LabelKeys, config.GCELabelKeyProblem)
	config.CheckList(report, "ownership.descriptionContains", d.Ownership.DescriptionContains, func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "must not be empty — it would match every disk"
		}
		return ""
	})
	if len(d.Ownership.LabelKeys) == 0 && len(d.Ownership.DescriptionContains) == 0 {
		report.Add("ownership", "give at least one of labelKeys or descriptionContains — without them no disk can be shown to come from Kubernetes, so none would ever be deleted")
	}
	if d.SnapshotBeforeDelete || d.SnapshotLabel != "" {
		config.CheckGCELabelKey(report, "snapshotLabel", d.SnapshotLabel)
	}
	if d.SnapshotTimeout <= 0 {
		report.Add("snapshotTimeout", "must be more than 0 — how long a run waits for its disks' snapshots to be READY")
	}
}
