package ecrfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const acct = "012345678910" // the account of the API reference samples

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// sample reads a response body copied into ../testdata (comment lines dropped).
func sample(t testing.TB, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return decode(t, []byte(strings.Join(lines, "")))
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func call(t testing.TB, s *Server, op string, in any, sign bool) reply {
	t.Helper()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/", bytes.NewReader(b))
	req.Header.Set("X-Amz-Target", TargetPrefix+op)
	req.Header.Set("Content-Type", ContentType)
	if sign {
		req.Header.Set("X-Amz-Date", "20240301T120000Z")
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240301/"+s.Region()+"/ecr/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0123")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, decode(t, rb)}
}

func newServer(t testing.TB, o Options) *Server {
	t.Helper()
	o.Logf = t.Logf
	s := NewServer(o)
	t.Cleanup(s.Close)
	return s
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func first(t testing.TB, m map[string]any, list string) map[string]any {
	t.Helper()
	l, _ := m[list].([]any)
	if len(l) == 0 {
		t.Fatalf("%s: empty in %v", list, m)
	}
	return l[0].(map[string]any)
}

func wantError(t testing.TB, r reply, status int, code, msgPart string) {
	t.Helper()
	if r.status != status || r.body["__type"] != code || !strings.Contains(fmt.Sprint(r.body["message"]), msgPart) {
		t.Fatalf("got %d %v, want %d %s containing %q", r.status, r.body, status, code, msgPart)
	}
	if !slices.Equal(keys(r.body), []string{"__type", "message"}) {
		t.Errorf("error body keys %v, want __type and message (ECR's lower-case member)", keys(r.body))
	}
	if r.header.Get("x-amzn-RequestId") == "" || r.header.Get("Content-Type") != ContentType {
		t.Errorf("headers %v", r.header)
	}
}

func TestEpochMatchesWireForm(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Unix(1563223656, 0), "1563223656"},
		{time.Unix(1645592761, 514_000_000), "1645592761.514"},
		{time.Unix(1645592761, 500_000_000), "1645592761.5"},
		{time.Unix(-1, 250_000_000), "-0.75"},
	} {
		b, _ := epoch(tc.t).MarshalJSON()
		if string(b) != tc.want {
			t.Errorf("%v: %s, want %s", tc.t, b, tc.want)
		}
	}
	// The sample's exponent form names the same instant as the fake's form.
	repo := first(t, sample(t, "describe_repositories_response.txt"), "repositories")
	f, err := repo["createdAt"].(json.Number).Float64()
	if err != nil || f != 1563223656 {
		t.Fatalf("sample createdAt %v: %v", repo["createdAt"], err)
	}
}

func TestShapesMatchTheSamples(t *testing.T) {
	s := newServer(t, Options{Region: "us-west-2"})
	s.AddRepository(acct, "sample-repo", time.Unix(1563223656, 0), nil)
	m := NewManifest("x", t0, "latest", "xenial")
	m.LastPull = t0.Add(time.Hour + 514*time.Millisecond)
	s.AddImage(acct, "sample-repo", m)

	// DescribeRepositories: the sample's fields, createdAt a number.
	got := call(t, s, OpDescribeRepositories, map[string]any{"registryId": acct}, true)
	want := sample(t, "describe_repositories_response.txt")
	gr, wr := first(t, got.body, "repositories"), first(t, want, "repositories")
	if !slices.Equal(keys(gr), keys(wr)) {
		t.Errorf("repository keys %v, sample %v", keys(gr), keys(wr))
	}
	if _, ok := gr["createdAt"].(json.Number); !ok || gr["createdAt"].(json.Number).String() != "1563223656" {
		t.Errorf("createdAt %v, want the epoch number", gr["createdAt"])
	}
	if gr["repositoryArn"] != "arn:aws:ecr:us-west-2:012345678910:repository/sample-repo" ||
		gr["repositoryUri"] != "012345678910.dkr.ecr.us-west-2.amazonaws.com/sample-repo" {
		t.Errorf("repository %v", gr)
	}

	// DescribeImages: only field names the sample (or the model: imageStatus)
	// uses, timestamps as numbers where the doc sample shows CLI strings.
	got = call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "sample-repo"}, true)
	gi := first(t, got.body, "imageDetails")
	wi := first(t, sample(t, "describe_images_response_fieldnames.txt"), "imageDetails")
	for _, k := range keys(gi) {
		if _, ok := wi[k]; !ok && k != "imageStatus" {
			t.Errorf("imageDetails field %q is not in the sample", k)
		}
	}
	for _, k := range []string{"imagePushedAt", "lastRecordedPullTime", "imageSizeInBytes"} {
		if _, ok := gi[k].(json.Number); !ok {
			t.Errorf("%s = %#v, want a JSON number", k, gi[k])
		}
	}
	if gi["lastRecordedPullTime"].(json.Number).String() != fmt.Sprintf("%d.514", t0.Add(time.Hour).Unix()) {
		t.Errorf("lastRecordedPullTime %v", gi["lastRecordedPullTime"])
	}

	// BatchGetImage: the sample's fields plus imageManifestMediaType; the
	// manifest a JSON string.
	got = call(t, s, OpBatchGetImage, map[string]any{"registryId": acct, "repositoryName": "sample-repo",
		"imageIds": []map[string]string{{"imageTag": "latest"}}}, true)
	want = sample(t, "batch_get_image_response.txt")
	gb, wb := first(t, got.body, "images"), first(t, want, "images")
	if w := append(keys(wb), "imageManifestMediaType"); !slices.Equal(keys(gb), slices.Sorted(slices.Values(w))) {
		t.Errorf("images[] keys %v, sample %v (+imageManifestMediaType)", keys(gb), keys(wb))
	}
	if !slices.Equal(keys(gb["imageId"]), keys(wb["imageId"])) {
		t.Errorf("imageId keys %v, sample %v", keys(gb["imageId"]), keys(wb["imageId"]))
	}
	if _, ok := gb["imageManifest"].(string); !ok || got.body["failures"] == nil {
		t.Errorf("imageManifest %T, failures %v", gb["imageManifest"], got.body["failures"])
	}

	// BatchDeleteImage by digest echoes the digest once per tag, like example 2.
	got = call(t, s, OpBatchDeleteImage, map[string]any{"registryId": acct, "repositoryName": "sample-repo",
		"imageIds": []map[string]string{{"imageDigest": m.Digest}}}, true)
	want = sample(t, "batch_delete_image_response.txt")
	if !slices.Equal(keys(got.body), keys(want)) || len(got.body["imageIds"].([]any)) != len(want["imageIds"].([]any)) {
		t.Errorf("delete: %v, sample %v", got.body, want)
	}
	// And a missing image: HTTP 200, imageIds [] present, a failure like the real capture.
	got = call(t, s, OpBatchDeleteImage, map[string]any{"registryId": acct, "repositoryName": "sample-repo",
		"imageIds": []map[string]string{{"imageTag": "latest"}}}, true)
	want = sample(t, "batch_delete_image_not_found.txt")
	if got.status != 200 || fmt.Sprint(got.body) != fmt.Sprint(want) {
		t.Errorf("not found: %d %v, real capture %v", got.status, got.body, want)
	}
}

func TestErrors(t *testing.T) {
	s := newServer(t, Options{})
	s.AddRepository(acct, "r", t0, nil)
	var ids []map[string]string
	for i := range 101 {
		ids = append(ids, map[string]string{"imageDigest": Digest(fmt.Sprint(i))})
	}

	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r"}, false),
		400, CodeMissingAuthentication, "Missing Authentication Token")
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "abc-app"}, true),
		400, CodeRepositoryNotFound, "The repository with name 'abc-app' does not exist in the registry with id '012345678910'")
	wantError(t, call(t, s, OpBatchDeleteImage, map[string]any{"registryId": acct, "repositoryName": "r", "imageIds": ids}, true),
		400, CodeInvalidParameter, "Invalid parameter at 'imageIds' failed to satisfy constraint: 'Member must have length less than or equal to 100'")
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r", "maxResults": 1001}, true),
		400, CodeInvalidParameter, "maxResults")
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r", "maxResults": 0}, true),
		400, CodeInvalidParameter, "maxResults")
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r", "maxResults": 5, "imageIds": ids[:1]}, true),
		400, CodeInvalidParameter, "imageIds")
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r", "imageIds": ids[:1]}, true),
		400, CodeImageNotFound, "does not exist within the repository with name 'r'")

	s.FailNext(OpDescribeImages, CodeServer, 1)
	wantError(t, call(t, s, OpDescribeImages, map[string]any{"registryId": acct, "repositoryName": "r"}, true), 500, CodeServer, "internal error")
	s.FailNext("*", CodeAccessDenied, 1)
	wantError(t, call(t, s, OpBatchDeleteImage, map[string]any{"registryId": acct, "repositoryName": "r", "imageIds": ids[:1]}, true),
		400, CodeAccessDenied, "is not authorized to perform: ecr:BatchDeleteImage on resource: arn:aws:ecr:us-east-1:012345678910:repository/r")

	s.SetRate(OpListImages, RateLimit{PerSecond: 0.001, Burst: 1})
	if r := call(t, s, OpListImages, map[string]any{"registryId": acct, "repositoryName": "r"}, true); r.status != 200 {
		t.Fatalf("first call: %v", r.body)
	}
	wantError(t, call(t, s, OpListImages, map[string]any{"registryId": acct, "repositoryName": "r"}, true), 400, CodeThrottling, "Rate exceeded")
	if s.Throttled() != 1 || s.Calls(OpListImages) != 2 || s.MutatingCalls() != 2 {
		t.Errorf("throttled %d, ListImages %d, mutating %d", s.Throttled(), s.Calls(OpListImages), s.MutatingCalls())
	}
	// The parse rule clients use (strip to '#', cut at ':') must give the code back.
	for _, c := range errorCases(t) {
		if c.Body == "" {
			continue
		}
		var b map[string]any
		_ = json.Unmarshal([]byte(c.Body), &b)
		ty, _ := b["__type"].(string)
		if ty == "" {
			continue
		}
		if i := strings.LastIndex(ty, "#"); i >= 0 {
			ty = ty[i+1:]
		}
		ty, _, _ = strings.Cut(ty, ":")
		if ty != c.ErrorCode {
			t.Errorf("%s: rule gives %q, want %q", c.ID, ty, c.ErrorCode)
		}
	}
}

type errorCase struct {
	ID        string `json:"id"`
	ErrorCode string `json:"errorCode"`
	Body      string `json:"body"`
}

func errorCases(t *testing.T) []errorCase {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "json11_error_cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	var cs []errorCase
	if err := json.Unmarshal([]byte(strings.Join(lines, "")), &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestPagingSurvivesDeletes(t *testing.T) {
	s := newServer(t, Options{})
	s.AddRepository(acct, "r", t0, nil)
	var imgs []Image
	for i := range 250 {
		// Added newest first: the fake sorts lazily.
		imgs = append(imgs, Image{Digest: Digest(fmt.Sprint(i)), PushedAt: t0.Add(-time.Duration(i) * time.Second)})
	}
	s.AddImages(acct, "r", imgs)
	seen := map[string]bool{}
	var token any
	pages := 0
	for {
		in := map[string]any{"registryId": acct, "repositoryName": "r"}
		if token != nil {
			in["nextToken"] = token
		}
		r := call(t, s, OpDescribeImages, in, true)
		pages++
		for _, d := range r.body["imageDetails"].([]any) {
			dg := d.(map[string]any)["imageDigest"].(string)
			if seen[dg] {
				t.Fatalf("%s twice", dg)
			}
			seen[dg] = true
		}
		if pages == 1 {
			// Delete an image already returned and one not yet returned.
			s.RemoveImage(acct, "r", Digest("249"))
			s.RemoveImage(acct, "r", Digest("0"))
		}
		token = r.body["nextToken"]
		if token == nil {
			break
		}
	}
	if pages != 3 || len(seen) != 249 {
		t.Fatalf("%d pages, %d images; want 3 pages (default 100) and 249 images", pages, len(seen))
	}
}

func TestBatchGetImageRecordsPull(t *testing.T) {
	for _, excluded := range []bool{false, true} {
		now := t0.Add(24 * time.Hour)
		s := newServer(t, Options{PullTimeExcluded: excluded, Now: func() time.Time { return now }})
		s.AddRepository(acct, "r", t0, nil)
		a := NewManifest("a", t0)
		idx := NewIndex(t0, []string{a.Digest})
		s.AddImages(acct, "r", []Image{a, idx})
		r := call(t, s, OpBatchGetImage, map[string]any{"registryId": acct, "repositoryName": "r",
			"imageIds":           []map[string]string{{"imageDigest": idx.Digest}},
			"acceptedMediaTypes": []string{MediaTypeOCIIndex}}, true)
		if im := first(t, r.body, "images"); im["imageManifest"] != idx.Manifest || im["imageManifestMediaType"] != MediaTypeOCIIndex {
			t.Fatalf("%v", im)
		}
		got, _ := s.Image(acct, "r", idx.Digest)
		if got.LastPull.Equal(now) == excluded {
			t.Errorf("excluded=%v: last pull %v", excluded, got.LastPull)
		}
		// Without the index types accepted, ECR answers a platform manifest.
		r = call(t, s, OpBatchGetImage, map[string]any{"registryId": acct, "repositoryName": "r",
			"imageIds":           []map[string]string{{"imageDigest": idx.Digest}},
			"acceptedMediaTypes": []string{MediaTypeOCIManifest}}, true)
		if im := first(t, r.body, "images"); im["imageManifestMediaType"] != MediaTypeOCIManifest || im["imageManifest"] != a.Manifest {
			t.Errorf("converted: %v", im)
		}
	}
}

// BenchmarkAddImages seeds 1,000,000 images across 500 repositories, then
// reads one 1000-image page from each repository's middle.
func BenchmarkAddImages(b *testing.B) {
	const repos, per = 500, 2000
	for b.Loop() {
		s := New(Options{})
		batch := make([]Image, per)
		for r := range repos {
			name := fmt.Sprintf("repo-%03d", r)
			s.AddRepository(acct, name, t0, nil)
			for i := range batch {
				batch[i] = Image{Digest: Digest(fmt.Sprintf("%d/%d", r, i)), PushedAt: t0.Add(time.Duration(per-i) * time.Second), SizeBytes: 1}
			}
			s.AddImages(acct, name, batch)
		}
		s.mu.Lock()
		for r := range repos {
			rp := s.repo(acct, fmt.Sprintf("repo-%03d", r))
			mid := imageToken(rp.sorted()[per/2])
			ims, _, e := page(rp, request{NextToken: &mid}, MaxPageSize)
			if e != nil || len(ims) != per/2-1 {
				b.Fatalf("page: %d %v", len(ims), e)
			}
		}
		s.mu.Unlock()
	}
	b.ReportMetric(repos*per, "images")
}
