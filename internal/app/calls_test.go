package app

import (
	"os"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// checkCalls is TestMain's check after the tests: every call the wire
// fakes served is declared by a kind or shared read (Permissions), so
// deploy/ grants it.
func checkCalls() int {
	return fakeapi.CheckSeen(os.Stdout, Permissions().Cloud())
}
