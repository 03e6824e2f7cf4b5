package k8spod

import "reclaim.dev/reclaim/reconcile/kinds/finished"

// Module is the kind for the wiring (internal/app registers it): on with
// a pods section, it relies on the clusters' workloads, and asks the
// collector for the section's retention annotation and, with a selector,
// the labels (finished.Module).
var Module = finished.Module(Name, Key, FromConfig, Permissions, Gauges)
