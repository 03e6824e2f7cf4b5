package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// noAWSProfiles points the AWS SDK at empty shared files, so that a named
// profile cannot be loaded, whatever the machine has.
func noAWSProfiles(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
}

// A discovery scope whose client cannot be built is an error naming it:
// dropped silently, its clusters would be missing from the fleet with
// nothing said.
func TestDiscoveryScopeThatCannotBeBuiltIsAnError(t *testing.T) {
	noAWSProfiles(t)
	cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  eks:\n    - account: \"111122223333\"\n      region: us-east-1\n      endpoint: http://127.0.0.1:1\n    - account: \"111122223333\"\n      region: us-west-2\n      profile: no-such-profile\n")
	ds, err := Discoverers(context.Background(), cfg, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "fleet.eks[1]") || !strings.Contains(err.Error(), "no-such-profile") {
		t.Fatalf("discoverers %d, error %v", len(ds), err)
	}
}

// An image consumer whose client cannot be built is an error naming it:
// skipped, the images only it runs would look unused.
func TestImageConsumerThatCannotBeBuiltIsAnError(t *testing.T) {
	noAWSProfiles(t)
	for _, svc := range []string{"ecs", "lambda", "batch"} {
		cfg := parse(t, "clusters:\n  - name: a\n    context: a\necr:\n  registries:\n    - account: \"111122223333\"\n      region: us-east-1\n  consumers:\n    - account: \"111122223333\"\n      region: us-east-1\n      profile: no-such-profile\n      "+svc+": true\n")
		src, _, err := ecrimage.OpenUsers(context.Background(), cfg, zap.NewNop(), "reclaim/test")
		if err == nil || src != nil || !strings.Contains(err.Error(), "ecr.consumers[0]."+svc) {
			t.Fatalf("%s: sources %v, error %v", svc, src != nil, err)
		}
	}
}
