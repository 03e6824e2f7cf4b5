// Package configs holds the example configurations. The demo's is embedded in
// the binary so that `reclaim demo` needs no files.
package configs

import _ "embed"

// Demo is configs/demo.yaml.
//
//go:embed demo.yaml
var Demo []byte
