package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// errNoDemo is what the production binary answers to `reclaim demo`: the demo
// needs the fakes, which only a -tags demo build links (demo.go).
var errNoDemo = errors.New("this reclaim was built without the demo (the production binary links no fakes): run `make demo`, or build with `go build -tags demo ./cmd/reclaim`")

func noDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Dry-run against an embedded simulated fleet (only in a -tags demo build: make demo)",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return errNoDemo },
	}
}
