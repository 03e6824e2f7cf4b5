package ecrimage

import (
	"strings"
	"testing"

	"reclaim.dev/reclaim/inventory"
)

// A pin says what its reference lacks: a tagged reference with no region
// is not "without tag or digest".
func TestAPinSaysWhatItsReferenceLacks(t *testing.T) {
	repo := inventory.RepoKey{Account: "123456789012", Region: "us-east-1", Name: "team/app"}
	noRegion := repo
	noRegion.Region = ""
	for _, tc := range []struct {
		ref  inventory.ImageRef
		want string
	}{
		{inventory.ImageRef{Repo: noRegion, Tag: "v1"}, "naming no region"},
		{inventory.ImageRef{Repo: repo}, "without tag or digest"},
		{inventory.ImageRef{Repo: inventory.RepoKey{Region: "us-east-1", Name: "team/app"}, Tag: "v1"}, "naming no ECR repository"},
	} {
		if got := unresolvable(tc.ref); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want it to say %q", tc.ref, got, tc.want)
		}
	}
}
