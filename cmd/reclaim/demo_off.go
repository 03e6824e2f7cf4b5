//go:build !demo

package main

import (
	"io"

	"github.com/spf13/cobra"
)

func demoCmd(_, _ io.Writer) *cobra.Command { return noDemoCmd() }
