package config

// The example configurations sit beside this package (demo.yaml, gke.yaml,
// eks.yaml, reference.yaml); the demo's is embedded so that `reclaim demo`
// needs no files.

import _ "embed"

// Demo is configs/demo.yaml.
//
//go:embed demo.yaml
var Demo []byte
