package ecr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
)

// The documented example account ids only.
const (
	acct  = "123456789012"
	acct2 = "012345678910"
)

var ctx = context.Background()

func newFake(t testing.TB, o ecrfake.Options) *ecrfake.Server {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	s := ecrfake.NewServer(o)
	t.Cleanup(func() {
		if n := s.Calls(ecrfake.OpUnknown); n > 0 {
			t.Errorf("the client made %d requests the fake has no route for", n)
		}
	})
	t.Cleanup(s.Close)
	return s
}

func options(endpoint string, mod ...func(*ecr.Options)) ecr.Options {
	o := ecr.Options{
		Service: awsclient.Service{
			Account:           acct,
			Region:            "us-east-1",
			Endpoint:          endpoint,
			Credentials:       credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
			RequestsPerSecond: 1000,
			MaxAttempts:       3,
			MaxBackoff:        5 * time.Millisecond,
			HTTPClient:        noKeepAlive,
		},
	}
	for _, m := range mod {
		m(&o)
	}
	return o
}

func newClient(t testing.TB, endpoint string, mod ...func(*ecr.Options)) *ecr.Client {
	t.Helper()
	c, err := ecr.New(ctx, options(endpoint, mod...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// seed adds a repository with n single-platform manifests, one per minute
// from t0, every tenth tagged.
func seed(f *ecrfake.Server, account, repo string, n int) []string {
	f.AddRepository(account, repo, t0.Add(-time.Hour), nil)
	imgs := make([]ecrfake.Image, n)
	digests := make([]string, n)
	for i := range n {
		imgs[i] = ecrfake.Image{
			Digest:    ecrfake.Digest(fmt.Sprintf("%s/%s/%d", account, repo, i)),
			PushedAt:  t0.Add(time.Duration(i) * time.Minute),
			SizeBytes: int64(1000 + i),
			MediaType: ecrfake.MediaTypeOCIManifest,
		}
		if i%10 == 0 {
			imgs[i].Tags = []string{fmt.Sprintf("v%d", i)}
		}
		digests[i] = imgs[i].Digest
	}
	f.AddImages(account, repo, imgs)
	return digests
}

func listOne(t *testing.T, l inventory.RegistryListing, name string) inventory.RepoListing {
	t.Helper()
	for _, r := range l.Repos {
		if r.Repo.Name == name {
			return r
		}
	}
	t.Fatalf("repository %s not listed (%d repos; registry problem %q)", name, len(l.Repos), l.Problem)
	return inventory.RepoListing{}
}

func TestListPaginatesEveryImageOnce(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	want := seed(f, acct, "team/app", 2500)
	pulled := t0.Add(48*time.Hour + 514*time.Millisecond)
	f.AddImage(acct, "team/app", ecrfake.Image{Digest: ecrfake.Digest("pulled"), Tags: []string{"latest", "prod"},
		PushedAt: t0.Add(-time.Hour), LastPull: pulled, SizeBytes: 78447648, MediaType: ecrfake.MediaTypeDockerManifest})
	want = append(want, ecrfake.Digest("pulled"))
	seed(f, acct2, "elsewhere", 3)

	l := newClient(t, f.URL()).ListAll(ctx)
	if !l.Complete || l.Account != acct || l.Region != "us-east-1" {
		t.Fatalf("registry listing: %+v", l)
	}
	if len(l.Repos) != 1 {
		t.Fatalf("got %d repos, want 1 (other accounts' repos must not leak)", len(l.Repos))
	}
	r := l.Repos[0]
	if !r.Complete || r.Problem != "" {
		t.Fatalf("repo incomplete: %q", r.Problem)
	}
	if r.Repo != (inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "team/app"}) || !r.Created.Equal(t0.Add(-time.Hour)) {
		t.Errorf("repo key %+v created %v", r.Repo, r.Created)
	}
	var got []string
	for _, im := range r.Images.All() {
		got = append(got, im.Digest)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d digests, want %d", len(got), len(want))
	}
	// 2,501 images at 1000 a page: 3 pages.
	if n := f.Calls(ecrfake.OpDescribeImages); n != 3 {
		t.Errorf("DescribeImages calls = %d, want 3", n)
	}
	if n := f.Calls(ecrfake.OpDescribeRepositories); n != 1 {
		t.Errorf("DescribeRepositories calls = %d, want 1", n)
	}
	if n := f.Calls(ecrfake.OpListTagsForResource) + f.Calls(ecrfake.OpBatchGetImage); n != 0 {
		t.Errorf("%d ListTagsForResource/BatchGetImage calls, want 0 (no protect tag, no indexes)", n)
	}
	for _, im := range r.Images.All() {
		if im.Digest != ecrfake.Digest("pulled") {
			continue
		}
		if !slices.Equal(im.Tags, []string{"latest", "prod"}) || !im.PushedAt.Equal(t0.Add(-time.Hour)) ||
			!im.LastPull.Equal(pulled) || im.SizeBytes != 78447648 || im.MediaType != inventory.MediaTypeDockerManifest ||
			im.IsIndex() || im.ChildrenKnown {
			t.Errorf("converted image: %+v", im)
		}
	}
}

func TestListReadsIndexChildren(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	f.AddRepository(acct, "multi", t0, nil)
	wantChildren := map[string][]string{}
	var all []ecrfake.Image
	for i := range 150 {
		a := ecrfake.NewManifest(fmt.Sprintf("amd64-%d", i), t0)
		b := ecrfake.NewManifest(fmt.Sprintf("arm64-%d", i), t0)
		idx := ecrfake.NewIndex(t0.Add(time.Second), []string{a.Digest, b.Digest}, fmt.Sprintf("v%d", i))
		if i%2 == 1 {
			idx = ecrfake.NewDockerList(t0.Add(time.Second), []string{a.Digest, b.Digest}, fmt.Sprintf("v%d", i))
		}
		wantChildren[idx.Digest] = []string{a.Digest, b.Digest}
		all = append(all, a, b, idx)
	}
	// Real bodies from the wire samples: a buildkit index with an attestation,
	// and a Docker manifest list.
	for _, name := range []string{"buildkit_attestation_index.txt", "docker_manifest_list.txt"} {
		body := testdata(t, name)
		ch, mt := sampleChildren(t, body)
		d := ecrfake.Digest(body)
		wantChildren[d] = ch
		all = append(all, ecrfake.Image{Digest: d, PushedAt: t0, MediaType: mt, Manifest: body})
	}
	f.AddImages(acct, "multi", all)

	l := newClient(t, f.URL()).ListAll(ctx)
	r := listOne(t, l, "multi")
	if !r.Complete {
		t.Fatalf("incomplete: %s", r.Problem)
	}
	if r.Images.Len() != 452 {
		t.Fatalf("got %d images, want 452", r.Images.Len())
	}
	for _, im := range r.Images.All() {
		want, isIdx := wantChildren[im.Digest]
		if isIdx != im.IsIndex() {
			t.Fatalf("%s: IsIndex %v, want %v (%s)", im.Digest, im.IsIndex(), isIdx, im.MediaType)
		}
		if !isIdx {
			if im.ChildrenKnown || im.Children != nil {
				t.Errorf("manifest %s has children %v", im.Digest, im.Children)
			}
			continue
		}
		if !im.ChildrenKnown || !slices.Equal(im.Children, want) {
			t.Errorf("index %s: children %v known=%v, want %v", im.Digest, im.Children, im.ChildrenKnown, want)
		}
	}
	// 152 indexes at 100 per call. On a loaded machine the SDK has been seen
	// to retry one call after Go's transport dropped an idle connection it was
	// reusing (aws/aws-sdk-go-v2#2737, retried since #2949); more than that
	// is a batching bug (the fleet benchmark checks exact counts).
	if n := f.Calls(ecrfake.OpBatchGetImage); n < 2 || n > 3 {
		t.Errorf("BatchGetImage calls = %d, want 2", n)
	}
}

func testdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func sampleChildren(t *testing.T, body string) ([]string, string) {
	t.Helper()
	var idx struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := jsonUnmarshal(body, &idx); err != nil {
		t.Fatal(err)
	}
	var ch []string
	for _, m := range idx.Manifests {
		ch = append(ch, m.Digest)
	}
	return ch, idx.MediaType
}

func TestListUnreadableIndexMakesRepoIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *ecrfake.Server)
		want  string
	}{
		{"bad json", func(f *ecrfake.Server) {
			f.AddImage(acct, "r", ecrfake.Image{Digest: ecrfake.Digest("bad"), PushedAt: t0, MediaType: ecrfake.MediaTypeOCIIndex, Manifest: "{not json"})
		}, "unreadable body"},
		{"BatchGetImage fails", func(f *ecrfake.Server) {
			f.AddImage(acct, "r", ecrfake.NewIndex(t0, []string{ecrfake.Digest("c")}))
			f.FailNext(ecrfake.OpBatchGetImage, ecrfake.CodeServer, 3)
		}, "failed after 3 attempts"},
		{"index deleted before BatchGetImage", func(f *ecrfake.Server) {
			idx := ecrfake.NewIndex(t0, []string{ecrfake.Digest("c")})
			f.AddImage(acct, "r", idx)
			f.SetOnRequest(func(op string) {
				if op == ecrfake.OpBatchGetImage {
					f.RemoveImage(acct, "r", idx.Digest)
				}
			})
		}, "ImageNotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, ecrfake.Options{})
			seed(f, acct, "r", 5)
			tc.setup(f)
			r := listOne(t, newClient(t, f.URL()).ListAll(ctx), "r")
			if r.Complete || !strings.Contains(r.Problem, tc.want) {
				t.Fatalf("complete=%v problem %q, want incomplete with %q", r.Complete, r.Problem, tc.want)
			}
			if r.Images.Len() != 6 {
				t.Errorf("got %d images, want all 6 kept", r.Images.Len())
			}
			for _, im := range r.Images.All() {
				if im.IsIndex() && im.ChildrenKnown {
					t.Errorf("index %s: children known after a failed read", im.Digest)
				}
			}
		})
	}
}

func TestDescribeImagesFallsBackWhenOneIsMissing(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	d := seed(f, acct, "r", 150)
	c := newClient(t, f.URL())

	got, err := c.DescribeImages(ctx, "r", d[:120])
	if err != nil || len(got) != 120 {
		t.Fatalf("all present: %d images, %v", len(got), err)
	}
	// Two chunks of 100; the SDK may repeat one call after Go's transport
	// dropped an idle connection it was reusing (aws/aws-sdk-go-v2#2737).
	if n := f.Calls(ecrfake.OpDescribeImages); n < 2 || n > 3 {
		t.Errorf("DescribeImages calls = %d, want 2 (chunks of 100), or 3 with one transport retry", n)
	}

	f.ResetCalls()
	f.RemoveImage(acct, "r", d[2])
	ask := []string{d[0], d[1], d[2], d[3], d[0]}
	got, err = c.DescribeImages(ctx, "r", ask)
	if err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, im := range got {
		digests = append(digests, im.Digest)
	}
	if !slices.Equal(digests, []string{d[0], d[1], d[3]}) {
		t.Errorf("got %v, want the three present", digests)
	}
	if got[0].Tags[0] != "v0" || !got[0].PushedAt.Equal(t0) {
		t.Errorf("converted: %+v", got[0])
	}
	// One call answered ImageNotFoundException, then one per digest (and
	// at most one transport retry, as above).
	if n := f.Calls(ecrfake.OpDescribeImages); n < 1+4 || n > 1+4+1 {
		t.Errorf("DescribeImages calls = %d, want 5 (6 with one transport retry)", n)
	}

	if _, err := c.DescribeImages(ctx, "no-such-repo", d[:1]); !errors.Is(err, outcome.ErrNotFound) {
		t.Errorf("missing repository: %v, want outcome.ErrNotFound", err)
	}
}

func TestDeleteImagesBatchLimit(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	d := seed(f, acct, "r", 201)
	c := newClient(t, f.URL())

	if _, err := c.DeleteImages(ctx, "r", d[:101]); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Fatalf("101 digests: %v, want a client-side error", err)
	}
	if n := f.MutatingCalls(); n != 0 {
		t.Fatalf("101 digests reached the API (%d calls)", n)
	}
	fails, err := c.DeleteImages(ctx, "r", d[:100])
	if err != nil || len(fails) != 0 {
		t.Fatalf("100 digests: %v %v", fails, err)
	}
	if n := len(f.Images(acct, "r")); n != 101 {
		t.Errorf("%d images left, want 101", n)
	}
	if f.MutatingCalls() != 1 {
		t.Errorf("MutatingCalls = %d, want 1", f.MutatingCalls())
	}
}

func TestDeleteImagesFailures(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	d := seed(f, acct, "r", 3)
	f.FailDelete(acct, "r", d[1], "KmsError", "kms key disabled")
	c := newClient(t, f.URL())

	missing := ecrfake.Digest("never-was")
	fails, err := c.DeleteImages(ctx, "r", []string{d[0], d[1], missing})
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.ImageFailure{
		{Digest: d[1], Code: "KmsError", Reason: "kms key disabled"},
		{Digest: missing, Code: inventory.ImageNotFound, Reason: "Requested image not found"},
	}
	if !slices.Equal(fails, want) {
		t.Fatalf("failures %+v, want %+v", fails, want)
	}
	if f.Has(acct, "r", d[0]) || !f.Has(acct, "r", d[1]) {
		t.Fatal("wrong images deleted")
	}
	// The injected failure sticks until cleared; a retry next run then succeeds.
	if fails, _ := c.DeleteImages(ctx, "r", []string{d[1]}); len(fails) != 1 {
		t.Fatalf("sticky failure: %+v", fails)
	}
	f.FailDelete(acct, "r", d[1], "", "")
	if fails, err := c.DeleteImages(ctx, "r", []string{d[1]}); err != nil || len(fails) != 0 || f.Has(acct, "r", d[1]) {
		t.Fatalf("after clearing: %+v %v", fails, err)
	}
	// A repeated delete reports ImageNotFound: the caller treats it as gone.
	fails, err = c.DeleteImages(ctx, "r", []string{d[0]})
	if err != nil || len(fails) != 1 || fails[0].Code != inventory.ImageNotFound {
		t.Fatalf("second delete: %+v %v", fails, err)
	}
	if _, err := c.DeleteImages(ctx, "gone", []string{d[0]}); !errors.Is(err, outcome.ErrNotFound) ||
		!strings.Contains(err.Error(), "does not exist in the registry") {
		t.Fatalf("missing repository: %v, want outcome.ErrNotFound with ECR's message", err)
	}
}

func TestDeleteChildBeforeIndexIsRefused(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	f.AddRepository(acct, "r", t0, nil)
	a, b := ecrfake.NewManifest("a", t0), ecrfake.NewManifest("b", t0)
	idx := ecrfake.NewIndex(t0, []string{a.Digest, b.Digest}, "v1")
	f.AddImages(acct, "r", []ecrfake.Image{a, b, idx})
	c := newClient(t, f.URL())

	fails, err := c.DeleteImages(ctx, "r", []string{a.Digest})
	if err != nil || len(fails) != 1 || fails[0].Code != "ImageReferencedByManifestList" ||
		!strings.Contains(fails[0].Reason, idx.Digest) {
		t.Fatalf("child first: %+v %v", fails, err)
	}
	if !f.Has(acct, "r", a.Digest) {
		t.Fatal("child deleted while its index exists")
	}
	// Index first (in the same request), then its children.
	fails, err = c.DeleteImages(ctx, "r", []string{idx.Digest, a.Digest, b.Digest})
	if err != nil || len(fails) != 0 {
		t.Fatalf("index then children: %+v %v", fails, err)
	}
	if n := len(f.Images(acct, "r")); n != 0 {
		t.Errorf("%d images left", n)
	}
}

func TestThrottlingIsAbsorbed(t *testing.T) {
	t.Parallel()
	// The fake allows 40 DescribeImages a second; the client would send 1000.
	f := newFake(t, ecrfake.Options{Rates: map[string]ecrfake.RateLimit{ecrfake.OpDescribeImages: {PerSecond: 40, Burst: 4}}})
	for i := range 20 {
		seed(f, acct, fmt.Sprintf("r%02d", i), 3)
	}
	c := newClient(t, f.URL(), func(o *ecr.Options) { o.MaxAttempts = 10; o.MaxBackoff = 50 * time.Millisecond })
	l := c.ListAll(ctx)
	if !l.Complete || len(l.Repos) != 20 {
		t.Fatalf("registry: complete=%v %d repos %q", l.Complete, len(l.Repos), l.Problem)
	}
	for _, r := range l.Repos {
		if !r.Complete || r.Images.Len() != 3 {
			t.Fatalf("%s: complete=%v %d images %q", r.Repo.Name, r.Complete, r.Images.Len(), r.Problem)
		}
	}
	if f.Throttled() == 0 {
		t.Error("the fake never throttled: the test does not test throttling")
	}
	t.Logf("throttled %d of %d DescribeImages", f.Throttled(), f.Calls(ecrfake.OpDescribeImages))
}

func TestClientLimiterAvoidsThrottling(t *testing.T) {
	// The client's buckets match the fake's, one per API action as ECR's
	// quotas are: few or no throttles.
	rl := ecrfake.RateLimit{PerSecond: 50, Burst: 5}
	f := newFake(t, ecrfake.Options{Rates: map[string]ecrfake.RateLimit{ecrfake.OpDescribeRepositories: rl, ecrfake.OpDescribeImages: rl,
		ecrfake.OpGetRepositoryPolicy: rl, ecrfake.OpGetRegistryPolicy: rl, ecrfake.OpListTagsForResource: rl, ecrfake.OpBatchGetImage: rl}})
	for i := range 30 {
		seed(f, acct, fmt.Sprintf("r%02d", i), 2)
	}
	// 20% under the server: a loaded machine jitters the pacing.
	c := newClient(t, f.URL(), func(o *ecr.Options) { o.RequestsPerSecond = 40; o.Burst = 5; o.MaxAttempts = 10 })
	start := time.Now()
	l := c.ListAll(ctx)
	if !l.Complete || len(l.Repos) != 30 {
		t.Fatalf("registry: complete=%v %d repos %q", l.Complete, len(l.Repos), l.Problem)
	}
	if f.Throttled() > 2 {
		t.Errorf("throttled %d times with a client limit under the server's", f.Throttled())
	}
	t.Logf("%d calls in %v, %d throttled", f.TotalCalls(), time.Since(start), f.Throttled())
}

func TestThrottledAfterMaxAttemptsIsExplained(t *testing.T) {
	t.Parallel()
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "r", 1)
	f.FailNext(ecrfake.OpDescribeImages, ecrfake.CodeThrottling, 3)
	r := listOne(t, newClient(t, f.URL()).ListAll(ctx), "r")
	if r.Complete || !strings.Contains(r.Problem, "throttled after 3 attempts") {
		t.Fatalf("problem %q", r.Problem)
	}
}

func TestServerExceptionIsRetried(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "r", 10)
	f.FailNext(ecrfake.OpDescribeImages, ecrfake.CodeServer, 2)
	f.FailNext(ecrfake.OpDescribeRepositories, ecrfake.CodeServer, 1)
	l := newClient(t, f.URL()).ListAll(ctx)
	r := listOne(t, l, "r")
	if !l.Complete || !r.Complete || r.Images.Len() != 10 {
		t.Fatalf("complete=%v/%v %d images %q %q", l.Complete, r.Complete, r.Images.Len(), l.Problem, r.Problem)
	}
	if n := f.Calls(ecrfake.OpDescribeImages); n != 3 {
		t.Errorf("DescribeImages calls = %d, want 3", n)
	}
}

func TestFailedPageMakesRepoIncomplete(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "r", 2500)
	var first atomic.Bool
	f.SetOnRequest(func(op string) {
		if op == ecrfake.OpDescribeImages && first.CompareAndSwap(false, true) {
			// The first page is served; the second fails all 3 attempts.
			f.FailNext(ecrfake.OpDescribeImages, ecrfake.CodeServer, 3)
		}
	})
	l := newClient(t, f.URL()).ListAll(ctx)
	r := listOne(t, l, "r")
	if !l.Complete || r.Complete {
		t.Fatalf("registry complete=%v, repo complete=%v: want only the repository incomplete", l.Complete, r.Complete)
	}
	if r.Images.Len() != 1000 || !strings.Contains(r.Problem, "page 2") || !strings.Contains(r.Problem, "1000 images seen") {
		t.Errorf("%d images, problem %q; want the first page kept and page 2 named", r.Images.Len(), r.Problem)
	}
}

func TestAccessDeniedIsExplained(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "r", 3)
	f.FailNext(ecrfake.OpDescribeImages, ecrfake.CodeAccessDenied, 1)
	c := newClient(t, f.URL())
	r := listOne(t, c.ListAll(ctx), "r")
	if r.Complete || !strings.Contains(r.Problem, "grant ecr:DescribeImages to the principal") || !strings.Contains(r.Problem, "is not authorized") {
		t.Fatalf("problem %q", r.Problem)
	}
	if n := f.Calls(ecrfake.OpDescribeImages); n != 1 {
		t.Errorf("AccessDenied was retried: %d calls", n)
	}

	f.FailNext(ecrfake.OpDescribeRepositories, ecrfake.CodeAccessDenied, 1)
	l := c.ListAll(ctx)
	if l.Complete || !strings.Contains(l.Problem, "ecr:DescribeRepositories") || len(l.Repos) != 0 {
		t.Fatalf("registry: complete=%v problem %q", l.Complete, l.Problem)
	}
}

func TestProtectTag(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "keep", 1)
	seed(f, acct, "trim", 1)
	seed(f, acct, "other", 1)
	f.SetRepositoryTags(acct, "keep", map[string]string{"reclaim.dev/protect": "true", "team": "x"})
	f.SetRepositoryTags(acct, "other", map[string]string{"reclaim.dev/protect": "false"}) // any value protects

	c := newClient(t, f.URL(), func(o *ecr.Options) { o.ProtectTag = "reclaim.dev/protect" })
	l := c.ListAll(ctx)
	for _, r := range l.Repos {
		if r.Protected != (r.Repo.Name != "trim") || !r.Complete {
			t.Errorf("%s: protected=%v complete=%v %q", r.Repo.Name, r.Protected, r.Complete, r.Problem)
		}
	}
	if n := f.Calls(ecrfake.OpListTagsForResource); n != 3 {
		t.Errorf("ListTagsForResource calls = %d, want 3", n)
	}

	f.ResetCalls()
	f.FailNext(ecrfake.OpListTagsForResource, ecrfake.CodeAccessDenied, 1)
	l = newClient(t, f.URL(), func(o *ecr.Options) { o.ProtectTag = "reclaim.dev/protect"; o.Concurrency = 1 }).ListAll(ctx)
	incomplete := 0
	for _, r := range l.Repos {
		if !r.Complete {
			incomplete++
			if !strings.Contains(r.Problem, "ecr:ListTagsForResource") || !strings.Contains(r.Problem, `tags "reclaim.dev/protect" are unknown`) {
				t.Errorf("%s: problem %q", r.Repo.Name, r.Problem)
			}
		}
	}
	if incomplete != 1 {
		t.Errorf("%d repos incomplete, want 1: unknown protection must make its repo incomplete", incomplete)
	}

	// The re-read before a delete reads the same tags, one call.
	f.ResetCalls()
	tags, err := c.RepoTags(ctx, "keep")
	if err != nil || tags["reclaim.dev/protect"] != "true" || tags["team"] != "x" || f.Calls(ecrfake.OpListTagsForResource) != 1 {
		t.Fatalf("RepoTags(keep) = %v, %v after %d calls", tags, err, f.Calls(ecrfake.OpListTagsForResource))
	}
	if _, err := c.RepoTags(ctx, "missing"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("RepoTags(missing): %v, want outcome.ErrNotFound", err)
	}
	f.FailNext(ecrfake.OpListTagsForResource, ecrfake.CodeAccessDenied, 1)
	if _, err := c.RepoTags(ctx, "keep"); err == nil || !strings.Contains(err.Error(), "ecr:ListTagsForResource") {
		t.Fatalf("RepoTags denied: %v", err)
	}
}

// The owner tag's value names a repository's owner (RepoListing.Labels, one
// map per owner); it is read without a protect tag too.
func TestOwnerTag(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "etl-a", 1)
	seed(f, acct, "etl-b", 1)
	seed(f, acct, "plain", 1)
	f.SetRepositoryTags(acct, "etl-a", map[string]string{"team": "etl"})
	f.SetRepositoryTags(acct, "etl-b", map[string]string{"team": "etl", "reclaim.dev/protect": "true"})
	l := newClient(t, f.URL(), func(o *ecr.Options) { o.OwnerTag = "team" }).ListAll(ctx)
	labels := map[string]map[string]string{}
	for _, r := range l.Repos {
		labels[r.Repo.Name] = r.Labels
		if r.Protected || !r.Complete {
			t.Errorf("%s: protected=%v (no protect tag configured) complete=%v", r.Repo.Name, r.Protected, r.Complete)
		}
	}
	if labels["etl-a"]["team"] != "etl" || labels["plain"] != nil || fmt.Sprintf("%p", labels["etl-a"]) != fmt.Sprintf("%p", labels["etl-b"]) {
		t.Fatalf("labels %v: want etl's shared by etl-a and etl-b, none for plain", labels)
	}
	if n := f.Calls(ecrfake.OpListTagsForResource); n != 3 {
		t.Errorf("ListTagsForResource calls = %d, want 3", n)
	}
	// Unknown tags are an unknown owner: the repository is not trimmed.
	f.FailNext(ecrfake.OpListTagsForResource, ecrfake.CodeAccessDenied, 1)
	l = newClient(t, f.URL(), func(o *ecr.Options) { o.OwnerTag = "team"; o.Concurrency = 1 }).ListAll(ctx)
	incomplete := 0
	for _, r := range l.Repos {
		if !r.Complete {
			incomplete++
			if !strings.Contains(r.Problem, `tags "team" are unknown`) {
				t.Errorf("%s: problem %q", r.Repo.Name, r.Problem)
			}
		}
	}
	if incomplete != 1 {
		t.Errorf("%d repos incomplete, want 1: an unknown owner must make its repo incomplete", incomplete)
	}
}

// A repository deleted between the registry's listing and its own is Gone:
// no image, complete (its images are gone with it), the registry complete.
func TestRepositoryDeletedWhileListingIsGone(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "stays", 2)
	seed(f, acct, "goes", 2)
	f.SetOnRequest(func(op string) {
		if op == ecrfake.OpDescribeImages {
			f.RemoveRepository(acct, "goes")
		}
	})
	l := newClient(t, f.URL()).ListAll(ctx)
	byName := map[string]*inventory.RepoListing{}
	for i := range l.Repos {
		byName[l.Repos[i].Repo.Name] = &l.Repos[i]
	}
	stays, goes := byName["stays"], byName["goes"]
	if !l.Complete || len(l.Repos) != 2 || stays == nil || goes == nil {
		t.Fatalf("%+v", l)
	}
	if !stays.Complete || stays.Gone || stays.Len() != 2 || !goes.Gone || !goes.Complete || goes.Len() != 0 {
		t.Fatalf("stays %+v\ngoes %+v", stays, goes)
	}
}

// A registry's repositories are listed a window at a time (Concurrency+1):
// the first ones at List, the next as each is asked for; asked again
// through a copy of its listing, a repository is listed anew, never handed
// over empty.
func TestListIsLazy(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	digests := map[string][]string{}
	for _, r := range []string{"a", "b", "c", "d", "e"} {
		digests[r] = seed(f, acct, r, 3)
	}
	c := newClient(t, f.URL(), func(o *ecr.Options) { o.Concurrency = 1 })
	f.ResetCalls()
	described := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for f.Calls(ecrfake.OpDescribeImages) < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // and no more than that
		if n := f.Calls(ecrfake.OpDescribeImages); n != want {
			t.Fatalf("%d repositories described, want %d", n, want)
		}
	}
	l := c.List(ctx)
	if len(l.Repos) != 5 {
		t.Fatalf("%d repositories", len(l.Repos))
	}
	described(2) // a and b
	copyOfB := l.Repos[1]
	l.Repos[1].Ensure() // b, and c starts
	if !l.Repos[1].Listed() || l.Repos[1].Len() != 3 || l.Repos[0].Listed() {
		t.Fatalf("b listed %v with %d images; a listed %v", l.Repos[1].Listed(), l.Repos[1].Len(), l.Repos[0].Listed())
	}
	described(3)
	l.Repos[1].Drop()
	if l.Repos[1].Len() != 3 || !l.Repos[1].HasDigest(digests["b"][2]) || l.Repos[1].HasDigest(digests["c"][0]) {
		t.Fatalf("after Drop: %d images, or its digests wrong", l.Repos[1].Len())
	}
	copyOfB.Ensure()
	if copyOfB.Len() != 3 || !copyOfB.Complete {
		t.Fatalf("a copy asking again got %d images, complete %v", copyOfB.Len(), copyOfB.Complete)
	}
}

func TestMisconfiguredClientFailsLoudly(t *testing.T) {
	f := newFake(t, ecrfake.Options{Region: "us-east-1"})
	seed(f, acct, "r", 1)
	l := newClient(t, f.URL(), func(o *ecr.Options) { o.Region = "eu-west-1" }).ListAll(ctx)
	if l.Complete || !strings.Contains(l.Problem, "InvalidSignatureException") {
		t.Fatalf("wrong region: complete=%v %q", l.Complete, l.Problem)
	}
}

func TestFleet(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	d1 := seed(f, acct, "a", 3)
	seed(f, acct2, "b", 4)
	fl, err := ecr.NewFleet(ctx, []ecr.Options{options(f.URL()), options(f.URL(), func(o *ecr.Options) { o.Account = acct2 })})
	if err != nil {
		t.Fatal(err)
	}
	ls := fl.List(ctx)
	for i := range ls {
		ls[i].EnsureAll()
	}
	if len(ls) != 2 || ls[0].Account != acct || ls[1].Account != acct2 || len(ls[1].Repos) != 1 || ls[1].Repos[0].Images.Len() != 4 {
		t.Fatalf("%+v", ls)
	}
	key := inventory.RepoKey{Account: acct, Region: "us-east-1", Name: "a"}
	if got, err := fl.DescribeImages(ctx, key, d1[:2]); err != nil || len(got) != 2 {
		t.Fatalf("DescribeImages: %d %v", len(got), err)
	}
	if fails, err := fl.DeleteImages(ctx, key, d1[:1]); err != nil || len(fails) != 0 || f.Has(acct, "a", d1[0]) {
		t.Fatalf("DeleteImages: %v %v", fails, err)
	}
	other := inventory.RepoKey{Account: acct, Region: "eu-west-1", Name: "a"}
	if _, err := fl.DeleteImages(ctx, other, d1[1:2]); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Fatalf("unknown registry: %v", err)
	}

	_, err = ecr.NewFleet(ctx, []ecr.Options{options(f.URL()), options(f.URL()), {Service: awsclient.Service{Region: "us-east-1"}}})
	if err == nil || !strings.Contains(err.Error(), "configured twice") || !strings.Contains(err.Error(), "account (registryId) is required") {
		t.Fatalf("bad fleet: %v", err)
	}
}

// noKeepAlive sends every request on a new connection: exact call counts and
// results of non-idempotent calls must not depend on the SDK repeating one
// after Go's transport dropped an idle connection it was about to reuse
// (aws/aws-sdk-go-v2#2737), which a loaded CI machine makes likely.
var noKeepAlive = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })

// Who may pull: each repository's policy (GetRepositoryPolicy, once per
// repository a run) and the registry's (GetRegistryPolicy, once), through
// the real SDK; a policy that cannot be read leaves the repository
// incomplete, or the registry's pullers unknown.
func TestPullersFromPolicies(t *testing.T) {
	f := newFake(t, ecrfake.Options{})
	seed(f, acct, "shared", 1)
	seed(f, acct, "private", 1)
	f.SetRepositoryPolicy(acct, "shared", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Principal":{"AWS":"arn:aws:iam::444455556666:root"},"Action":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"]}]}`)
	f.SetRegistryPolicy(acct, `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:*",
		"Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"}}}]}`)
	l := newClient(t, f.URL()).ListAll(ctx)
	if !slices.Equal(l.Pullers, []string{"org:o-a1b2c3d4e5"}) || l.PullersProblem != "" {
		t.Fatalf("registry pullers %v %q", l.Pullers, l.PullersProblem)
	}
	for _, r := range l.Repos {
		want := []string(nil)
		if r.Repo.Name == "shared" {
			want = []string{"444455556666"}
		}
		if !slices.Equal(r.Pullers, want) || !r.Complete {
			t.Errorf("%s: pullers %v complete %v %q", r.Repo.Name, r.Pullers, r.Complete, r.Problem)
		}
	}
	if r, g := f.Calls(ecrfake.OpGetRepositoryPolicy), f.Calls(ecrfake.OpGetRegistryPolicy); r != 2 || g != 1 {
		t.Errorf("GetRepositoryPolicy %d, GetRegistryPolicy %d calls; want 2 and 1", r, g)
	}

	f.ResetCalls()
	f.FailNext(ecrfake.OpGetRepositoryPolicy, ecrfake.CodeAccessDenied, 1)
	f.FailNext(ecrfake.OpGetRegistryPolicy, ecrfake.CodeAccessDenied, 1)
	l = newClient(t, f.URL(), func(o *ecr.Options) { o.Concurrency = 1 }).ListAll(ctx)
	if !strings.Contains(l.PullersProblem, "ecr:GetRegistryPolicy") {
		t.Errorf("registry pullers problem %q", l.PullersProblem)
	}
	incomplete := 0
	for _, r := range l.Repos {
		if !r.Complete {
			incomplete++
			if !strings.Contains(r.Problem, "who may pull from it is unknown") {
				t.Errorf("%s: problem %q", r.Repo.Name, r.Problem)
			}
		}
	}
	if incomplete != 1 {
		t.Errorf("%d repositories incomplete, want 1: an unread policy must hold its repository", incomplete)
	}
}

// GetRegistryPolicy reads the caller's registry. Credentials that land in
// another account read that account's policy, or find none there: either
// way who may pull from this registry is unknown, and it says why.
func TestRegistryPolicyOfAnotherAccountIsUnknown(t *testing.T) {
	const other = "444455556666"
	f := newFake(t, ecrfake.Options{}) // the caller's account is the fake's default, acct
	seed(f, other, "shared", 1)
	for name, policy := range map[string]string{"another policy": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + acct + `"},"Action":"ecr:*"}]}`, "none": ""} {
		t.Run(name, func(t *testing.T) {
			f.SetRegistryPolicy(acct, policy)
			l := newClient(t, f.URL(), func(o *ecr.Options) { o.Account = other }).ListAll(ctx)
			if len(l.Pullers) != 0 || !strings.Contains(l.PullersProblem, "the registry policy read is account "+acct+"'s, not "+other+"'s") {
				t.Fatalf("pullers %v, problem %q", l.Pullers, l.PullersProblem)
			}
		})
	}
}
