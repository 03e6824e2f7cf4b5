package imageref

import (
	"strings"
	"testing"

	"reclaim.dev/reclaim/inventory"
)

const (
	acct = "123456789012"
	dgst = "sha256:65e409ae5b2d553181bd086cc59aaaaa19c9b5b6e9aadd3c7b8122606f03744a"
	host = acct + ".dkr.ecr.us-east-1.amazonaws.com"
)

func repo(region, name string) inventory.RepoKey {
	return inventory.RepoKey{Account: acct, Region: region, Name: name}
}

func TestParseHost(t *testing.T) {
	for _, tc := range []struct {
		host            string
		account, region string
		ok              bool
	}{
		{host, acct, "us-east-1", true},
		{host + ":443", acct, "us-east-1", true},
		{strings.ToUpper(host), acct, "us-east-1", true},
		{acct + ".dkr.ecr-fips.us-gov-west-1.amazonaws.com", acct, "us-gov-west-1", true},
		{acct + ".dkr.ecr.cn-north-1.amazonaws.com.cn", acct, "cn-north-1", true},
		{acct + ".dkr.ecr.cn-northwest-1.amazonaws.com.cn:443", acct, "cn-northwest-1", true},
		{acct + ".dkr-ecr.eu-west-1.on.aws", acct, "eu-west-1", true},
		{acct + ".dkr-ecr-fips.us-east-2.on.aws", acct, "us-east-2", true},
		{acct + ".dkr.ecr.ap-southeast-5.amazonaws.com", acct, "ap-southeast-5", true},

		{host + ":5000", "", "", false},
		{"12345678901.dkr.ecr.us-east-1.amazonaws.com", "", "", false},   // 11 digits
		{"1234567890123.dkr.ecr.us-east-1.amazonaws.com", "", "", false}, // 13 digits
		{"abcdefghijkl.dkr.ecr.us-east-1.amazonaws.com", "", "", false},
		{acct + ".dkr.ecr.us-east-1.amazonaws.com.evil.example", "", "", false},
		{acct + ".dkr.ecr.not_a_region.amazonaws.com", "", "", false},
		{acct + ".dkr.ecr-fips.us-east-1.on.aws", "", "", false},
		{acct + ".dkr.ecr.us-east-1", "", "", false},
		{"public.ecr.aws", "", "", false},
		{"docker.io", "", "", false},
		{"gcr.io", "", "", false},
		{"us-docker.pkg.dev", "", "", false},
		{"localhost:5000", "", "", false},
		{"", "", "", false},
	} {
		a, r, ok := ParseHost(tc.host)
		if a != tc.account || r != tc.region || ok != tc.ok {
			t.Errorf("ParseHost(%q) = %q, %q, %v; want %q, %q, %v", tc.host, a, r, ok, tc.account, tc.region, tc.ok)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    inventory.ImageRef
		ok, err bool
	}{
		// ECR: tags, digests, both, no tag (latest), ports, nested paths.
		{in: host + "/app:1.2.3", want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Tag: "1.2.3"}, ok: true},
		{in: host + "/app", want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Tag: "latest"}, ok: true},
		{in: host + "/team/svc/api@" + dgst, want: inventory.ImageRef{Repo: repo("us-east-1", "team/svc/api"), Digest: dgst}, ok: true},
		{in: host + "/app:v2@" + dgst, want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Tag: "v2", Digest: dgst}, ok: true},
		{in: host + ":443/app:v2", want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Tag: "v2"}, ok: true},
		{in: "  " + host + "/app:v2\n", want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Tag: "v2"}, ok: true},
		{in: acct + ".dkr.ecr-fips.us-gov-east-1.amazonaws.com/app:1", want: inventory.ImageRef{Repo: repo("us-gov-east-1", "app"), Tag: "1"}, ok: true},
		{in: acct + ".dkr.ecr.cn-north-1.amazonaws.com.cn/app:1", want: inventory.ImageRef{Repo: repo("cn-north-1", "app"), Tag: "1"}, ok: true},
		{in: acct + ".dkr-ecr.eu-central-1.on.aws/app@" + dgst, want: inventory.ImageRef{Repo: repo("eu-central-1", "app"), Digest: dgst}, ok: true},
		{in: acct + ".dkr-ecr-fips.us-west-2.on.aws/app:1", want: inventory.ImageRef{Repo: repo("us-west-2", "app"), Tag: "1"}, ok: true},
		// Pull-through cache repositories: the rule prefix is part of the name.
		{in: host + "/ecr-public/nginx/nginx:1.27", want: inventory.ImageRef{Repo: repo("us-east-1", "ecr-public/nginx/nginx"), Tag: "1.27"}, ok: true},
		{in: host + "/docker-hub/library/nginx", want: inventory.ImageRef{Repo: repo("us-east-1", "docker-hub/library/nginx"), Tag: "latest"}, ok: true},
		{in: host + "/quay/prometheus/node-exporter:v1.8.0", want: inventory.ImageRef{Repo: repo("us-east-1", "quay/prometheus/node-exporter"), Tag: "v1.8.0"}, ok: true},
		{in: host + "/k8s/pause:3.9", want: inventory.ImageRef{Repo: repo("us-east-1", "k8s/pause"), Tag: "3.9"}, ok: true},
		{in: host + "/github/org/image@" + dgst, want: inventory.ImageRef{Repo: repo("us-east-1", "github/org/image"), Digest: dgst}, ok: true},

		// Not ECR: docker.io normalisation, other registries, ECR Public, wrong port.
		{in: "nginx"},
		{in: "nginx:1.27"},
		{in: "library/nginx@" + dgst},
		{in: "docker.io/library/nginx:latest"},
		{in: "public.ecr.aws/nginx/nginx:1.27"},
		{in: "gcr.io/google-containers/pause:3.2"},
		{in: "localhost:5000/app:1"},
		{in: "registry.example.com:5000/team/app:1@" + dgst},
		{in: host + ":5000/app:1"},
		// Invalid: uppercase repository, bad tag, bad digest, empty, template.
		{in: host + "/App:1", err: true},
		{in: host + "/app:bad tag", err: true},
		{in: host + "/app@sha256:abc", err: true},
		{in: host + "/app:{{ .Values.tag }}", err: true},
		{in: "${REGISTRY}/app:1", err: true},
		{in: "", err: true},
		{in: "NGINX", err: true},
	} {
		got, ok, err := Parse(tc.in)
		if (err != nil) != tc.err || ok != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v, %v; want %+v, %v, err=%v", tc.in, got, ok, err, tc.want, tc.ok, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.in) {
			t.Errorf("Parse(%q) error %q does not name the reference", tc.in, err)
		}
	}
}

func TestParseImageID(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    inventory.ImageRef
		ok, err bool
	}{
		{in: "docker-pullable://" + host + "/app@" + dgst, want: inventory.ImageRef{Repo: repo("us-east-1", "app"), Digest: dgst}, ok: true},
		{in: host + "/team/app@" + dgst, want: inventory.ImageRef{Repo: repo("us-east-1", "team/app"), Digest: dgst}, ok: true},
		{in: acct + ".dkr.ecr.cn-north-1.amazonaws.com.cn/app@" + dgst, want: inventory.ImageRef{Repo: repo("cn-north-1", "app"), Digest: dgst}, ok: true},
		// From the wire samples: not ECR.
		{in: "docker-pullable://registry.opensource.zalan.do/pathfinder/skipper@sha256:65e409ae5b2d553181bd086cc59aaaaa19c9b5b6e9aadd3c7b8122606f03744a"},
		{in: "docker.io/library/nginx@sha256:f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d"},
		// Config ids and empty: nothing to say, no error.
		{in: "docker://" + dgst},
		{in: dgst},
		{in: ""},
		// Garbage.
		{in: "docker-pullable://" + host + "/app@sha256:zz", err: true},
		{in: "imageIDValue", err: true}, // uppercase repository name
	} {
		got, ok, err := ParseImageID(tc.in)
		if (err != nil) != tc.err || ok != tc.ok || got != tc.want {
			t.Errorf("ParseImageID(%q) = %+v, %v, %v; want %+v, %v, err=%v", tc.in, got, ok, err, tc.want, tc.ok, tc.err)
		}
	}
}

func TestLoose(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want inventory.RepoKey
		ok   bool
	}{
		{host + "/app:{{ .Values.image.tag }}", repo("us-east-1", "app"), true},
		{host + "/team/app:${TAG}", repo("us-east-1", "team/app"), true},
		{host + "/app@${DIGEST}", repo("us-east-1", "app"), true},
		{host + ":443/app:{{ .Values.tag }}", repo("us-east-1", "app"), true},
		{host + "/App:1", repo("us-east-1", "app"), true}, // ECR names are lowercase: pin the only repo it could mean
		{acct + ".dkr.ecr.cn-north-1.amazonaws.com.cn/app:{{.tag}}", repo("cn-north-1", "app"), true},
		{acct + ".dkr-ecr.eu-west-1.on.aws/app:${TAG}", repo("eu-west-1", "app"), true},
		{acct + ".dkr.ecr-fips.us-east-1.amazonaws.com/app:${TAG}", repo("us-east-1", "app"), true},
		// The repository name is templated: the whole registry.
		{host + "/{{ .Values.name }}:1", repo("us-east-1", ""), true},
		{host + "/team/{{ .Values.name }}:1", repo("us-east-1", ""), true},
		{host + "/app-{{ .Values.env }}:1", repo("us-east-1", ""), true},
		{host + "/${APP}", repo("us-east-1", ""), true},
		// Account or region templated: that field is unknown.
		{"${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/app:1", inventory.RepoKey{Region: "us-east-1", Name: "app"}, true},
		{"{{ .Values.account }}.dkr.ecr.us-west-2.amazonaws.com/app:{{ .Values.tag }}", inventory.RepoKey{Region: "us-west-2", Name: "app"}, true},
		{acct + ".dkr.ecr.{{ .Values.region }}.amazonaws.com/app:1", inventory.RepoKey{Account: acct, Name: "app"}, true},
		{acct + ".dkr.ecr.${REGION}.amazonaws.com/${APP}:1", inventory.RepoKey{Account: acct}, true},
		// Not ECR.
		{"${REGISTRY}/app:1", inventory.RepoKey{}, false},
		{"public.ecr.aws/{{ .Values.x }}", inventory.RepoKey{}, false},
		{"nginx:{{ .Values.tag }}", inventory.RepoKey{}, false},
	} {
		got, ok := Loose(tc.in)
		if ok != tc.ok || got.Ref.Repo != tc.want {
			t.Errorf("Loose(%q) = %+v, %v; want repo %+v, %v", tc.in, got.Ref.Repo, ok, tc.want, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if got.Ref.Tag != "" || got.Ref.Digest != "" || got.Problem == "" || !strings.Contains(got.Problem, tc.in) {
			t.Errorf("Loose(%q) = %+v: want no tag or digest and a problem naming the reference", tc.in, got)
		}
		if !LooksECR(tc.in) {
			t.Errorf("LooksECR(%q) = false", tc.in)
		}
	}
	if u, _ := Loose(host + "/{{ .Values.name }}:1"); !strings.Contains(u.Problem, "every image of every repository of account "+acct+" in us-east-1") {
		t.Errorf("problem %q does not say the whole registry is kept", u.Problem)
	}
}

func TestWalkImages(t *testing.T) {
	doc := map[string]any{
		"spec": map[string]any{
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers":     []any{map[string]any{"name": "main", "image": "a"}, "junk", map[string]any{"name": "noimage"}},
				"initContainers": []any{map[string]any{"name": "init", "image": "b"}},
				"volumes":        []any{map[string]any{"name": "models", "image": map[string]any{"reference": "c"}}, map[string]any{"name": "x", "emptyDir": map[string]any{}}},
			}}}},
			"templates": []any{
				map[string]any{"container": map[string]any{"image": "d"}},
				map[string]any{"script": map[string]any{"image": "e", "source": "echo"}, "sidecars": []any{map[string]any{"name": "side", "image": "f"}}},
			},
			"ephemeralContainers": []any{map[string]any{"name": "debug", "image": "g"}},
			"containers":          "not a list",
		},
	}
	got := map[string]string{}
	WalkImages(doc, func(image, what string) { got[image] = what })
	want := map[string]string{"a": "main", "b": "init", "c": "volume models", "d": "container", "e": "script", "f": "side", "g": "debug"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("image %s: got %q, want %q", k, got[k], v)
		}
	}
}

func TestFind(t *testing.T) {
	text := `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: app
          image: "` + host + `/app:{{ .Values.image.tag | default .Chart.AppVersion }}"
        - name: side
          image: ` + host + `/side:1.0@` + dgst + `
        - name: env
          image: ${ACCOUNT}.dkr.ecr.us-west-2.amazonaws.com/env:${TAG}
        - name: other
          image: {{ .Values.registry }}/other:1
      # --image=` + host + `/flag:2
`
	var got []string
	for _, u := range Find(text) {
		got = append(got, u.Ref.Repo.Account+"|"+u.Ref.Repo.Region+"|"+u.Ref.Repo.Name+"|"+u.Ref.Tag+"|"+u.Ref.Digest+"|"+boolStr(u.Problem != ""))
	}
	want := []string{
		acct + "|us-east-1|app|||problem",
		acct + "|us-east-1|side|1.0|" + dgst + "|",
		"|us-west-2|env|||problem",
		acct + "|us-east-1|flag|2||",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Find:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func boolStr(b bool) string {
	if b {
		return "problem"
	}
	return ""
}
