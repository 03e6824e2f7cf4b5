package testenv

import (
	"os"
	"testing"
)

// EnvScale turns the scale tests on: `make test-scale` sets it to 1 and
// runs only them.
const EnvScale = "RECLAIM_SCALE"

// Scale skips t unless RECLAIM_SCALE=1. A scale test (the 100,000-Job
// backlog, the full registry, a million clocks) takes minutes under -race,
// so `make test` leaves it to `make test-scale`, whose list in the
// Makefile (SCALE_TESTS) the repository root's scale_test.go holds to the
// tests that call Scale.
func Scale(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvScale) != "1" {
		t.Skip("a scale test: `make test-scale` runs it (or set RECLAIM_SCALE=1)")
	}
}
