// Package calltest is the TestMain of a package whose tests drive real
// clients against the wire fakes: after the tests, every call the fakes
// served must be declared by a kind or shared read (app.Permissions), so
// deploy/ grants it.
package calltest

import (
	"os"
	"testing"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/providers/fakeapi"
)

// Main runs the tests, then fails the process on an undeclared call.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = fakeapi.CheckSeen(os.Stdout, app.Permissions().Cloud())
	}
	os.Exit(code)
}
