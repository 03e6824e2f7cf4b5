package ebs_test

import (
	"os"
	"testing"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/fakeapi"
)

// TestMain fails the tests if the client made a call through the wire
// fakes that no kind or read declares (internal/perms): deploy/ would not
// grant it.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = fakeapi.CheckSeen(os.Stdout, app.Permissions().Cloud())
	}
	os.Exit(code)
}
