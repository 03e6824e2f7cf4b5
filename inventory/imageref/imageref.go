// Package imageref parses container image references and container status
// image IDs into inventory.ImageRef values for Amazon ECR private
// registries. References to any other registry are recognised and ignored.
package imageref

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"

	"reclaim.dev/reclaim/inventory"
)

// DefaultTag is the tag a runtime pulls for a reference with neither tag nor digest.
const DefaultTag = "latest"

// Image ID prefixes written by dockershim (Kubernetes <= 1.23) into
// status.containerStatuses[].imageID.
const (
	dockerPullablePrefix = "docker-pullable://"
	dockerPrefix         = "docker://"
)

var (
	accountRe = regexp.MustCompile(`^[0-9]{12}$`)
	// regionRe matches AWS region names: us-east-1, us-gov-west-1, cn-north-1,
	// ap-southeast-5, eu-isoe-west-1.
	regionRe = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	// configIDRe is an image config id (docker://sha256:…, a bare sha256:…):
	// it names no repository.
	configIDRe = regexp.MustCompile(`^[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)
)

// Registry host forms, after ACCOUNT. and before the region; each lists the
// domain suffixes that may follow REGION.
var hostForms = []struct {
	label    string
	suffixes []string
}{
	{"dkr.ecr", []string{"amazonaws.com", "amazonaws.com.cn"}},
	{"dkr.ecr-fips", []string{"amazonaws.com"}},
	// Dual-stack. The China form is assumed by analogy with the other China
	// dual-stack endpoints; accepting a host that does not exist only keeps
	// more images, never fewer.
	{"dkr-ecr", []string{"on.aws", "on.amazonwebservices.com.cn"}},
	{"dkr-ecr-fips", []string{"on.aws"}},
}

// ParseHost reports whether host is an ECR private registry and returns its
// account and region. It accepts ACCOUNT.dkr.ecr.REGION.amazonaws.com (and
// .amazonaws.com.cn in China), the FIPS form ACCOUNT.dkr.ecr-fips.REGION.amazonaws.com
// and the dual-stack forms ACCOUNT.dkr-ecr[-fips].REGION.on.aws, with an
// optional :443 port. Host names are case-insensitive. public.ecr.aws (ECR
// Public) is not a private registry.
func ParseHost(host string) (account, region string, ok bool) {
	h := strings.ToLower(host)
	h = strings.TrimSuffix(h, ":443")
	if strings.Contains(h, ":") {
		return "", "", false
	}
	acct, rest, found := strings.Cut(h, ".")
	if !found || !accountRe.MatchString(acct) {
		return "", "", false
	}
	for _, f := range hostForms {
		r, ok := strings.CutPrefix(rest, f.label+".")
		if !ok {
			continue
		}
		reg, suffix, found := strings.Cut(r, ".")
		if !found || !regionRe.MatchString(reg) {
			return "", "", false
		}
		for _, s := range f.suffixes {
			if suffix == s {
				return acct, reg, true
			}
		}
		return "", "", false
	}
	return "", "", false
}

// Parse parses a container image reference as the kubelet's runtime does:
// docker.io normalisation ("nginx" is docker.io/library/nginx), registries
// with ports, tags, digests, and name:tag@digest (both kept). ok is true only
// for an ECR private registry. A reference with neither tag nor digest gets
// tag "latest", the tag the runtime pulls. err is set when s is not a valid
// reference at all; see Loose for keeping such a reference when it names ECR.
func Parse(s string) (ref inventory.ImageRef, ok bool, err error) {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(s))
	if err != nil {
		return inventory.ImageRef{}, false, fmt.Errorf("image %q: %w", s, err)
	}
	account, region, ok := ParseHost(reference.Domain(named))
	if !ok {
		return inventory.ImageRef{}, false, nil
	}
	ref.Repo = inventory.RepoKey{Account: account, Region: region, Name: reference.Path(named)}
	if t, isTagged := named.(reference.Tagged); isTagged {
		ref.Tag = t.Tag()
	}
	if d, isDigested := named.(reference.Digested); isDigested {
		ref.Digest = d.Digest().String()
	}
	if ref.Tag == "" && ref.Digest == "" {
		ref.Tag = DefaultTag
	}
	return ref, true, nil
}

// ParseImageID parses status.containerStatuses[].imageID, the image a
// container actually runs: docker-pullable://REPO@sha256:… (dockershim) or
// REPO@sha256:… (containerd, CRI-O). docker://sha256:… and a bare sha256:…
// are image config ids, not registry digests, and an empty string is a
// container that has not started: all three give ok=false and no error.
func ParseImageID(s string) (inventory.ImageRef, bool, error) {
	id := strings.TrimSpace(s)
	if id == "" {
		return inventory.ImageRef{}, false, nil
	}
	if r, found := strings.CutPrefix(id, dockerPullablePrefix); found {
		id = r
	} else if r, found := strings.CutPrefix(id, dockerPrefix); found {
		id = r
	}
	if configIDRe.MatchString(id) && !strings.Contains(id, "/") && !strings.Contains(id, "@") {
		// sha256:<hex>. (A one-component name:tag such as "nginx:1" matches
		// too; it is docker.io either way, never ECR.)
		return inventory.ImageRef{}, false, nil
	}
	return Parse(id)
}

// LooksECR reports whether s visibly names an ECR private registry host, even
// if it is not a valid reference (a template, a typo).
func LooksECR(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, ".dkr.ecr") || strings.Contains(l, ".dkr-ecr")
}

// hostMarkers are what follows ACCOUNT in an ECR host, longest first.
var hostMarkers = []string{".dkr.ecr-fips.", ".dkr-ecr-fips.", ".dkr.ecr.", ".dkr-ecr."}

// domainSuffixes may follow REGION, longest first.
var domainSuffixes = []string{".on.amazonwebservices.com.cn", ".amazonaws.com.cn", ".amazonaws.com", ".on.aws"}

// Loose keeps a reference that Parse rejected but that visibly names an ECR
// registry (a Helm or envsubst template, an invalid tag): it extracts what
// it can and returns a use with Problem set and neither Tag nor Digest, which
// the planner reads as pinning every image of Ref.Repo. Fields it could not
// determine are left empty and mean "any": an empty Repo.Name is every
// repository of the registry, an empty Account or Region any account or
// region. ok is false when s does not name an ECR host at all. Where and
// Users are left for the caller.
func Loose(s string) (inventory.ImageUse, bool) {
	l := strings.ToLower(s)
	mi, marker := -1, ""
	for _, m := range hostMarkers {
		if i := strings.Index(l, m); i >= 0 && (mi < 0 || i < mi) {
			mi, marker = i, m
		}
	}
	if mi < 0 {
		return inventory.ImageUse{}, false
	}
	var key inventory.RepoKey

	// ACCOUNT: the run of digits right before the marker.
	start := mi
	for start > 0 && l[start-1] >= '0' && l[start-1] <= '9' {
		start--
	}
	if acct := l[start:mi]; accountRe.MatchString(acct) && (start == 0 || !isNameChar(l[start-1])) {
		key.Account = acct
	}

	// REGION and the domain suffix.
	rest := l[mi+len(marker):]
	if end := strings.IndexByte(rest, '\n'); end >= 0 {
		rest = rest[:end]
	}
	si, suffix := -1, ""
	for _, d := range domainSuffixes {
		if i := strings.Index(rest, d); i >= 0 && (si < 0 || i < si || (i == si && len(d) > len(suffix))) {
			si, suffix = i, d
		}
	}
	// The region part (possibly a template) is inside the host: a slash or a
	// quote before the suffix means the suffix belongs to something else.
	if si >= 0 && !strings.ContainsAny(rest[:si], "/\"'") {
		if reg := rest[:si]; regionRe.MatchString(reg) {
			key.Region = reg
		}
		key.Name = loosePath(rest[si+len(suffix):])
	}

	scope := "every image of " + key.String()
	if key.Name == "" || key.Account == "" || key.Region == "" {
		scope = "every image of every repository"
		if key.Name != "" {
			scope = "every image of the repositories named " + key.Name
		}
		if key.Account != "" {
			scope += " of account " + key.Account
		} else {
			scope += " of every account"
		}
		if key.Region != "" {
			scope += " in " + key.Region
		} else {
			scope += " in every region"
		}
	}
	why := "not a valid image reference"
	if _, err := reference.ParseNormalizedNamed(strings.TrimSpace(s)); err != nil {
		why = err.Error()
	}
	return inventory.ImageUse{
		Ref:     inventory.ImageRef{Repo: key},
		Problem: fmt.Sprintf("image %q names an ECR registry but cannot be parsed (%s); reclaim keeps %s", s, why, scope),
	}, true
}

// loosePath returns the repository path at the start of s (after the host),
// or "" when it is absent or cut short by template text.
func loosePath(s string) string {
	if len(s) > 0 && s[0] == ':' { // a port
		i := 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		s = s[i:]
	}
	if len(s) == 0 || s[0] != '/' {
		return ""
	}
	s = s[1:]
	i := 0
	for i < len(s) && (isNameChar(s[i]) || s[i] == '/') {
		i++
	}
	path := s[:i]
	if path == "" || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return ""
	}
	if i < len(s) && !strings.ContainsRune(":@ \t\r\n\"',;]})`", rune(s[i])) {
		// Followed by template text ({{, ${, <…>): the name goes on.
		return ""
	}
	return path
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
