package main

import (
	"errors"
	"io"
	"testing"
)

// Without -tags demo, `reclaim demo` says how to get it instead of failing
// as an unknown command.
func TestDemoNeedsItsBuild(t *testing.T) {
	c := noDemoCmd()
	c.SetArgs(nil)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	if err := c.Execute(); !errors.Is(err, errNoDemo) {
		t.Fatalf("err %v, want errNoDemo", err)
	}
}
