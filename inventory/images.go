package inventory

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/outcome"
)

// RepoKey names an ECR repository: an account's registry in a region, and
// the repository's name inside it (which may contain slashes, and for a
// pull-through cache starts with the cache rule's prefix).
type RepoKey struct {
	Account string
	Region  string
	Name    string
}

// Host is the registry host images of the repository are pulled from.
func (k RepoKey) Host() string {
	h := k.Account + ".dkr.ecr." + k.Region + ".amazonaws.com"
	if strings.HasPrefix(k.Region, "cn-") {
		h += ".cn"
	}
	return h
}

// String is the repository as an image reference names it, without tag or digest.
func (k RepoKey) String() string { return k.Host() + "/" + k.Name }

// Registry is one account's registry in one region.
func (k RepoKey) Registry() string { return k.Account + "/" + k.Region }

// Media types of image indexes: their bodies list child manifests by digest.
const (
	MediaTypeOCIIndex          = "application/vnd.oci.image.index.v1+json"
	MediaTypeDockerList        = "application/vnd.docker.distribution.manifest.list.v2+json"
	MediaTypeOCIManifest       = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeDockerManifest    = "application/vnd.docker.distribution.manifest.v2+json"
	MediaTypeDockerManifestV1  = "application/vnd.docker.distribution.manifest.v1+json"
	MediaTypeDockerManifestV1s = "application/vnd.docker.distribution.manifest.v1+prettyjws"
)

// IsIndex reports whether a manifest media type is an image index (manifest list).
func IsIndex(mediaType string) bool {
	return mediaType == MediaTypeOCIIndex || mediaType == MediaTypeDockerList
}

// Image is one image in an ECR repository: a manifest or an index, named by
// digest, with the tags that currently point at it.
type Image struct {
	Digest    string
	Tags      []string
	PushedAt  time.Time
	LastPull  time.Time // zero: never pulled, or not recorded
	SizeBytes int64
	MediaType string // imageManifestMediaType
	// Children are the digests an index lists (platform manifests and
	// attestations). Nil for a manifest, or for an index whose body was not read.
	Children []string
	// ChildrenKnown is true for an index whose body was read.
	ChildrenKnown bool
}

// IsIndex reports whether the image is an index (manifest list).
func (i Image) IsIndex() bool { return IsIndex(i.MediaType) }

// RepoListing is one repository and its images.
type RepoListing struct {
	Repo    RepoKey
	Created time.Time
	// Protected is set when the repository carries the opt-out resource tag.
	Protected bool
	// Labels are the repository's tags reclaim keeps: the owner tag
	// (notify.ownerLabel), shared between the repositories of one owner.
	Labels map[string]string
	Images ImageTable
	// Complete is false when a page of images failed, or an index body could not
	// be read: then the repository is never trimmed this run.
	Complete bool
	Problem  string
	// Gone: the repository was deleted between the listing of the registry
	// and of its images; it has no image.
	Gone bool
	// Pullers are who the repository's policy lets pull besides its own
	// account: account ids, "org:o-…" (an AWS Organization), "*" (anyone).
	// A policy that could not be read makes the listing incomplete.
	Pullers []string

	// Load, when set, lists the repository (Protected, Labels, Images, Complete,
	// Problem, Gone) on the first Ensure: a registry of a million images is
	// listed one repository at a time as the plan reaches it, and Drop
	// frees the rows once it is planned, so that the whole listing is never
	// live at once. Nil: the listing is already there.
	Load func(*RepoListing)

	loaded   bool
	dropped  bool
	keepRows bool     // KeepRows
	count    int      // images, kept by Drop
	hashes   []uint64 // the digests' hashes, sorted, kept by Drop
}

// Ensure lists the repository if it is listed lazily and was not yet.
func (rl *RepoListing) Ensure() {
	if rl.Load != nil && !rl.loaded {
		rl.loaded = true
		rl.Load(rl)
	}
}

// Listed says whether the images are there to read: listed eagerly, or
// loaded by Ensure.
func (rl *RepoListing) Listed() bool { return rl.Load == nil || rl.loaded }

// Len is the number of images listed (after Drop too).
func (rl *RepoListing) Len() int {
	if rl.dropped {
		return rl.count
	}
	return rl.Images.Len()
}

// Drop frees the image rows of a lazily listed repository that has been
// planned, keeping its count and its digests' hashes (8 bytes an image) for
// HasDigest. An eager listing is its caller's and is kept whole, and so is
// one whose rows its planner keeps (KeepRows).
func (rl *RepoListing) Drop() {
	if rl.dropped || rl.Load == nil || rl.keepRows {
		return
	}
	rl.count = rl.Images.Len()
	rl.hashDigests()
	rl.Images = ImageTable{}
	rl.dropped = true
}

// KeepRows says that the planner keeps the listing's rows past Drop (its
// plan is made of the table itself): Drop then frees nothing, so it keeps
// them and makes no hashes; HasDigest makes them only if it is asked, which
// a trim's plan seldom does (8 bytes an image, and the CPU to sort them).
func (rl *RepoListing) KeepRows() { rl.keepRows = true }

func (rl *RepoListing) hashDigests() {
	if rl.hashes != nil {
		return
	}
	rl.hashes = make([]uint64, rl.Images.Len())
	for i := range rl.hashes {
		rl.hashes[i] = rl.Images.digestHash(i)
	}
	slices.Sort(rl.hashes)
}

// HasDigest says whether the listing (complete: asked after it is listed)
// shows the digest. It is answered from the digests' 64-bit hashes, made on
// the first ask (and by Drop): "no" is exact; a wrong "yes" has odds of one
// in 2^64 per image and errs on the safe side (a pending delete stays
// pending, a clock is kept).
func (rl *RepoListing) HasDigest(d string) bool {
	rl.hashDigests()
	_, ok := slices.BinarySearch(rl.hashes, hashDigest(d))
	return ok
}

// EnsureAll lists every repository listed lazily, in parallel as far as
// their loader allows (a lazy registry lists ahead of the one asked).
func (l *RegistryListing) EnsureAll() {
	for i := range l.Repos {
		l.Repos[i].Ensure()
	}
}

// RegistryListing is one account and region: its repositories.
type RegistryListing struct {
	Account string
	Region  string
	Repos   []RepoListing
	// Complete is false when the repositories themselves could not all be listed.
	Complete bool
	Problem  string
	// Pullers are who the registry's permissions policy lets pull from
	// every repository (accounts, "org:o-…", "*"); PullersProblem says why
	// they are unknown (the policy could not be read), and then anyone may.
	Pullers        []string
	PullersProblem string
}

// ImageRef is a reference to an image in an ECR repository, parsed from a
// pod, a workload template or a manifest file.
type ImageRef struct {
	Repo RepoKey
	// Tag and Digest: either or both. A reference with neither (and a Problem on
	// its ImageUse) could not be resolved: it pins the whole repository.
	Tag    string
	Digest string
}

// ImageUse is one distinct reference and who makes it.
type ImageUse struct {
	Ref ImageRef
	// Where is the first user seen, as cluster/namespace/Kind/name (container)
	// or manifests:path; Users counts every user.
	Where string
	Users int
	// Problem is set when the reference could not be parsed fully; the planner
	// then keeps everything in the repositories it could name.
	Problem string
}

// ImageSource is a set of image references that is not a cluster: a directory
// of Kubernetes manifests (a GitOps checkout) of images that will run, or an
// account's ECS task definitions and tasks or Lambda functions.
type ImageSource struct {
	// Kind is the source's kind in reports: manifests (when empty), ecs, lambda.
	Kind     string
	Name     string
	Complete bool
	Problems []string
	Files    int
	Images   []ImageUse
}

// SourceKind is the source's kind, manifests when unset.
func (s ImageSource) SourceKind() string {
	if s.Kind == "" {
		return "manifests"
	}
	return s.Kind
}

// ImageFailure is one image a batch delete did not delete, as ECR reports it
// in failures[]. Code "ImageNotFound" means the image is already gone.
type ImageFailure struct {
	Digest string
	Code   string
	Reason string
}

// ImageNotFound is ECR's failure code for an image that does not exist.
const ImageNotFound = "ImageNotFound"

// Err is the failure as a delete's error, with its outcome (OutcomeOf):
// ImageNotFound is gone already; any other code is ECR's answer that it did
// not delete the image (ImageReferencedByManifestList, KmsError, ...).
func (f ImageFailure) Err() error {
	err := fmt.Errorf("%s: %s", f.Code, f.Reason)
	if f.Code == ImageNotFound {
		return fmt.Errorf("%s: %w", f.Reason, outcome.ErrNotFound)
	}
	return outcome.MarkRefused(err)
}
