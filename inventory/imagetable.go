package inventory

import (
	"encoding/hex"
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"time"
)

// ImageTable is a repository's images, packed: a row of 64 bytes per image
// (the sha256 digest as bytes, times as Unix nanoseconds, the media type as a
// code) and the table's tags as one run of bytes, instead of an Image's ~260
// bytes with its strings, so that the listing of a registry of a million
// images fits the pod. At materializes an Image; the zero value is an empty
// table.
type ImageTable struct {
	rows []imageRow
	// Every row's tags, in row order: tag k is tagData[tagEnd[k-1]:tagEnd[k]].
	tagData []byte
	tagEnd  []uint32
	// Rare shapes are kept aside: a digest that is not sha256:<64 hex>, a
	// media type with no code, an index's children.
	digests  map[int32]string
	media    map[int32]string
	manyTags map[int32][]string // more tags than a row counts
	children map[int32][]string
}

type imageRow struct {
	digest         [32]byte
	pushed, pulled int64 // Unix nanoseconds, meaningful when the flag says so
	size           int64
	tags           uint32 // its first tag's index in ImageTable.tagEnd
	ntags          uint16
	media          uint8
	flags          uint8
}

const (
	rowPushed uint8 = 1 << iota
	rowPulled
	rowChildrenKnown
	rowOddDigest // the digest is in ImageTable.digests
)

// Media type codes; mediaOther is in ImageTable.media.
var mediaCodes = []string{"", MediaTypeOCIManifest, MediaTypeOCIIndex, MediaTypeDockerManifest, MediaTypeDockerList,
	MediaTypeDockerManifestV1, MediaTypeDockerManifestV1s}

const mediaOther = 255

// manyTags in a row's ntags: its tags are in ImageTable.manyTags.
const manyTags = 1<<16 - 1

const sha256Prefix = "sha256:"

// NewImageTable packs images (tests and fakes; a lister calls Add).
func NewImageTable(imgs ...Image) ImageTable {
	var t ImageTable
	t.rows = make([]imageRow, 0, len(imgs))
	for _, img := range imgs {
		t.Add(img)
	}
	return t
}

// Len is the number of images.
func (t *ImageTable) Len() int { return len(t.rows) }

// Add appends an image. Its strings are copied when they must be kept
// (tags, an unusual digest or media type): the table holds no pointer into
// what the caller passed, such as an SDK response.
func (t *ImageTable) Add(img Image) {
	i := int32(len(t.rows))
	r := imageRow{size: img.SizeBytes, tags: uint32(len(t.tagEnd))}
	if !packDigest(&r.digest, img.Digest) {
		r.flags |= rowOddDigest
		setAside(&t.digests, i, strings.Clone(img.Digest))
	}
	if !img.PushedAt.IsZero() {
		r.flags |= rowPushed
		r.pushed = img.PushedAt.UnixNano()
	}
	if !img.LastPull.IsZero() {
		r.flags |= rowPulled
		r.pulled = img.LastPull.UnixNano()
	}
	r.media = mediaOther
	for c, m := range mediaCodes {
		if img.MediaType == m {
			r.media = uint8(c)
			break
		}
	}
	if r.media == mediaOther {
		setAside(&t.media, i, strings.Clone(img.MediaType))
	}
	if len(img.Tags) < manyTags {
		r.ntags = uint16(len(img.Tags))
		for _, tag := range img.Tags {
			t.tagData = append(t.tagData, tag...)
			t.tagEnd = append(t.tagEnd, uint32(len(t.tagData)))
		}
	} else {
		r.ntags = manyTags
		tags := make([]string, len(img.Tags))
		for k, tag := range img.Tags {
			tags[k] = strings.Clone(tag)
		}
		setAside(&t.manyTags, i, tags)
	}
	t.rows = append(t.rows, r)
	if img.ChildrenKnown || len(img.Children) > 0 {
		t.SetChildren(int(i), slices.Clone(img.Children), img.ChildrenKnown)
	}
}

func setAside[V any](m *map[int32]V, i int32, v V) {
	if *m == nil {
		*m = map[int32]V{}
	}
	(*m)[i] = v
}

// packDigest stores a sha256:<64 lowercase hex> digest as bytes.
func packDigest(dst *[32]byte, d string) bool {
	h, ok := strings.CutPrefix(d, sha256Prefix)
	return ok && DecodeSHA256Hex(dst, h)
}

// DecodeSHA256Hex decodes h, a sha256 digest's 64 lowercase hex digits (the
// canonical form; anything else is refused), into dst: in one pass, as a
// million digests are read every run.
func DecodeSHA256Hex(dst *[32]byte, h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := range dst {
		a, b := hexValue[h[2*i]], hexValue[h[2*i+1]]
		if a|b > 0xf {
			return false
		}
		dst[i] = a<<4 | b
	}
	return true
}

// hexValue is a lowercase hex digit's value, 0xff for any other byte.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// digestHash is a 64-bit hash of image i's digest (hashDigest).
func (t *ImageTable) digestHash(i int) uint64 {
	r := &t.rows[i]
	if r.flags&rowOddDigest != 0 {
		return hashDigest(t.digests[int32(i)])
	}
	return maphash.Bytes(digestSeed, r.digest[:])
}

// digestSeed seeds the digests' hashes of this process (they are never
// stored): made-up digests (sha256:000…0d) hash as well as real ones.
var digestSeed = maphash.MakeSeed()

// hashDigest is a digest's 64-bit hash, the same for its packed form.
func hashDigest(d string) uint64 {
	var b [32]byte
	if packDigest(&b, d) {
		return maphash.Bytes(digestSeed, b[:])
	}
	return maphash.String(digestSeed, d)
}

// Digest is image i's digest.
func (t *ImageTable) Digest(i int) string {
	r := &t.rows[i]
	if r.flags&rowOddDigest != 0 {
		return t.digests[int32(i)]
	}
	var b [len(sha256Prefix) + 64]byte
	copy(b[:], sha256Prefix)
	hex.Encode(b[len(sha256Prefix):], r.digest[:])
	return string(b[:])
}

// Size is image i's size in bytes.
func (t *ImageTable) Size(i int) int64 { return t.rows[i].size }

// MediaType is image i's manifest media type.
func (t *ImageTable) MediaType(i int) string {
	if c := t.rows[i].media; c != mediaOther {
		return mediaCodes[c]
	}
	return t.media[int32(i)]
}

// IsIndex reports whether image i is an index.
func (t *ImageTable) IsIndex(i int) bool { return IsIndex(t.MediaType(i)) }

// SetChildren records what index i lists; known says its body was read.
func (t *ImageTable) SetChildren(i int, children []string, known bool) {
	if known {
		t.rows[i].flags |= rowChildrenKnown
	}
	if len(children) > 0 {
		setAside(&t.children, int32(i), children)
	}
}

// Trim gives back the room appends left at the end of the table's slices:
// a lister calls it when a repository is listed.
func (t *ImageTable) Trim() {
	t.rows = slices.Clip(slices.Clone(t.rows))
	t.tagData = slices.Clip(slices.Clone(t.tagData))
	t.tagEnd = slices.Clip(slices.Clone(t.tagEnd))
}

// tag is tag k of the table.
func (t *ImageTable) tag(k uint32) string {
	var start uint32
	if k > 0 {
		start = t.tagEnd[k-1]
	}
	return string(t.tagData[start:t.tagEnd[k]])
}

// At materializes image i. Its Children are the table's: read them, never
// change them.
func (t *ImageTable) At(i int) Image {
	r := &t.rows[i]
	img := Image{Digest: t.Digest(i), SizeBytes: r.size, MediaType: t.MediaType(i),
		ChildrenKnown: r.flags&rowChildrenKnown != 0, Children: t.children[int32(i)]}
	if r.ntags == manyTags {
		img.Tags = t.manyTags[int32(i)]
	} else if r.ntags > 0 {
		img.Tags = make([]string, r.ntags)
		for k := range img.Tags {
			img.Tags[k] = t.tag(r.tags + uint32(k))
		}
	}
	if r.flags&rowPushed != 0 {
		img.PushedAt = time.Unix(0, r.pushed).UTC()
	}
	if r.flags&rowPulled != 0 {
		img.LastPull = time.Unix(0, r.pulled).UTC()
	}
	return img
}

// All yields every image, materialized one at a time.
func (t *ImageTable) All() iter.Seq2[int, Image] {
	return func(yield func(int, Image) bool) {
		for i := range t.rows {
			if !yield(i, t.At(i)) {
				return
			}
		}
	}
}

// Slice materializes every image (one repository's, while it is planned).
func (t *ImageTable) Slice() []Image {
	out := make([]Image, len(t.rows))
	for i := range t.rows {
		out[i] = t.At(i)
	}
	return out
}
