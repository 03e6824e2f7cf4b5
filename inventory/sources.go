package inventory

// Source keys name the inputs of a run a decision relies on: a cluster, a
// discovery scope, a tap's pass over a cluster, a cloud listing. Each input
// the collector reads is a source of the plan (its completeness says whether
// what relies on it may be deleted), and a proposal names the sources it
// relies on by these keys.

// Source kinds of the fleet: a cluster (read or not), and a discovery scope.
const (
	SourceCluster   = "cluster"
	SourceDiscovery = "discovery"
)

// SourceTap is the source kind of a kind's own read of one resource (a
// kube.Tap); its name is the cluster's.
const SourceTap = "tap"

// SourceKey names a source: "cluster:prod-a", "gce-project:p1".
func SourceKey(kind, name string) string { return kind + ":" + name }

// ClusterKey is the source key of a cluster: what a decision names for every
// cluster that could use the resource, whether reclaim read it or not. A key
// no source answers for ("was not read") holds the decision.
func ClusterKey(name string) string { return SourceKey(SourceCluster, name) }

// DiscoveryKey is the source key of one discovery scope: a listing that
// failed holds everything a cluster of that scope could use.
func DiscoveryKey(platform, scope string) string {
	return SourceKey(SourceDiscovery, platform+" "+scope)
}

// TapKey is the source key of one tap's pass over one cluster: a decision
// that relies on what the tap read names it, and is held when that pass was
// incomplete or never ran (the cluster could not be reached).
func TapKey(tap, cluster string) string { return SourceKey(SourceTap+" "+tap, cluster) }

// UniqueKeys drops repeated source keys, keeping the first of each, in place.
func UniqueKeys(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
