package lambda_test

import (
	"testing"

	"reclaim.dev/reclaim/internal/app/calltest"
)

// TestMain fails the tests if the client made a call through the wire
// fakes that no kind or read declares (base/perms): deploy/ would not
// grant it.
func TestMain(m *testing.M) { calltest.Main(m) }
