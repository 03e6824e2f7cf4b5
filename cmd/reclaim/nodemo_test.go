//go:build !demo

package main

import (
	"errors"
	"testing"
)

// Without -tags demo, `reclaim demo` says how to get it instead of failing
// as an unknown command.
func TestDemoNeedsItsBuild(t *testing.T) {
	if _, _, err := execute("demo"); !errors.Is(err, errNoDemo) {
		t.Fatalf("err %v, want errNoDemo", err)
	}
}
