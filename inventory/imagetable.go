package inventory

import (
	"bytes"
	"encoding/hex"
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"time"
)

// ImageTable is a repository's images, packed: a row of 56 bytes per image
// (the sha256 digest as bytes, times as Unix milliseconds and the size
// packed into two words, the media type as a code) and the table's tags as
// one run of bytes, instead of an Image's ~260 bytes with its strings, so
// that the listing of a registry of a million images fits the pod. Rows are
// kept in chunks, so that a growing table never copies what it holds. At
// materializes an Image; the zero value is an empty table.
type ImageTable struct {
	chunks [][]imageRow // every chunk but the last holds chunkRows rows
	n      int
	// Every row's tags, in row order, each ended by a tagEnd byte: row i's
	// are tagData[rows[i-1].tagsEnd:rows[i].tagsEnd].
	tagData []byte
	// Rare shapes are kept aside: a digest that is not sha256:<64 hex>, a
	// media type with no code, an index's children, a time finer than a
	// millisecond or out of range, a size of 1 TiB or more, a tag holding
	// the tagEnd byte.
	digests  map[int32]string
	media    map[int32]string
	times    map[int32][2]time.Time // pushed, pulled
	sizes    map[int32]int64
	oddTags  map[int32][]string
	children map[int32][]string
}

const chunkRows = 1024

// imageRow is one image. Its words pack a time as Unix milliseconds in the
// top 44 bits (until the year 2527) and 20 bits of the size below: the size
// is lo | hi<<20, 40 bits.
type imageRow struct {
	digest  [32]byte
	a, b    uint64 // pushed ms<<20 | size low bits; pulled ms<<20 | size high bits
	tagsEnd uint32 // the end of its tags in ImageTable.tagData
	media   uint8
	flags   uint8
}

const (
	rowPushed uint8 = 1 << iota
	rowPulled
	rowChildrenKnown
	rowOddDigest // the digest is in ImageTable.digests
	rowOddTimes  // the times are in ImageTable.times
	rowOddSize   // the size is in ImageTable.sizes
	rowOddTags   // the tags are in ImageTable.oddTags
)

const (
	sizeBits  = 20
	sizeMask  = 1<<sizeBits - 1
	maxSize   = 1 << (2 * sizeBits)
	maxMillis = 1 << (64 - sizeBits)
	// tagEnd ends a tag in tagData: no valid tag holds it.
	tagEnd = 0
)

// Media type codes; mediaOther is in ImageTable.media.
var mediaCodes = []string{"", MediaTypeOCIManifest, MediaTypeOCIIndex, MediaTypeDockerManifest, MediaTypeDockerList,
	MediaTypeDockerManifestV1, MediaTypeDockerManifestV1s}

const mediaOther = 255

const sha256Prefix = "sha256:"

// NewImageTable packs images (tests and fakes; a lister calls Add).
func NewImageTable(imgs ...Image) ImageTable {
	var t ImageTable
	for _, img := range imgs {
		t.Add(img)
	}
	return t
}

// Len is the number of images.
func (t *ImageTable) Len() int { return t.n }

func (t *ImageTable) row(i int) *imageRow { return &t.chunks[i/chunkRows][i%chunkRows] }

// tagsStart is where row i's tags begin in tagData.
func (t *ImageTable) tagsStart(i int) uint32 {
	if i == 0 {
		return 0
	}
	return t.row(i - 1).tagsEnd
}

// packTime is t as Unix milliseconds, if it is a whole one in range.
func packTime(t time.Time) (uint64, bool) {
	ms := t.UnixMilli()
	if ms < 0 || ms >= maxMillis || t.Nanosecond()%int(time.Millisecond) != 0 {
		return 0, false
	}
	return uint64(ms), true
}

// Add appends an image. Its strings are copied when they must be kept
// (tags, an unusual digest or media type): the table holds no pointer into
// what the caller passed, such as an SDK response.
func (t *ImageTable) Add(img Image) {
	i := int32(t.n)
	var r imageRow
	if !packDigest(&r.digest, img.Digest) {
		r.flags |= rowOddDigest
		setAside(&t.digests, i, strings.Clone(img.Digest))
	}
	if !img.PushedAt.IsZero() {
		r.flags |= rowPushed
	}
	if !img.LastPull.IsZero() {
		r.flags |= rowPulled
	}
	pushed, okPushed := packTime(img.PushedAt)
	pulled, okPulled := packTime(img.LastPull)
	if (r.flags&rowPushed == 0 || okPushed) && (r.flags&rowPulled == 0 || okPulled) {
		r.a, r.b = pushed<<sizeBits, pulled<<sizeBits
	} else {
		r.flags |= rowOddTimes
		setAside(&t.times, i, [2]time.Time{img.PushedAt, img.LastPull})
	}
	if img.SizeBytes >= 0 && img.SizeBytes < maxSize {
		r.a |= uint64(img.SizeBytes) & sizeMask
		r.b |= uint64(img.SizeBytes) >> sizeBits
	} else {
		r.flags |= rowOddSize
		setAside(&t.sizes, i, img.SizeBytes)
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
	plain := true
	for _, tag := range img.Tags {
		plain = plain && strings.IndexByte(tag, tagEnd) < 0
	}
	if plain {
		need := len(img.Tags)
		for _, tag := range img.Tags {
			need += len(tag)
		}
		if len(t.tagData)+need > cap(t.tagData) {
			// Double: append's quarter steps copy a large run five times over.
			t.tagData = slices.Grow(t.tagData, max(need, len(t.tagData)))
		}
		for _, tag := range img.Tags {
			t.tagData = append(t.tagData, tag...)
			t.tagData = append(t.tagData, tagEnd)
		}
	} else {
		r.flags |= rowOddTags
		tags := make([]string, len(img.Tags))
		for k, tag := range img.Tags {
			tags[k] = strings.Clone(tag)
		}
		setAside(&t.oddTags, i, tags)
	}
	r.tagsEnd = uint32(len(t.tagData))
	if t.n%chunkRows == 0 {
		t.chunks = append(t.chunks, nil)
	}
	last := &t.chunks[len(t.chunks)-1]
	if len(*last) == cap(*last) && len(*last) >= 64 {
		// Grow once to a whole chunk: a large repository copies each row at
		// most a few times, a small one keeps a small chunk.
		*last = slices.Grow(*last, chunkRows-len(*last))
	}
	*last = append(*last, r)
	t.n++
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
	r := t.row(i)
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
	r := t.row(i)
	if r.flags&rowOddDigest != 0 {
		return t.digests[int32(i)]
	}
	var b [len(sha256Prefix) + 64]byte
	copy(b[:], sha256Prefix)
	hex.Encode(b[len(sha256Prefix):], r.digest[:])
	return string(b[:])
}

// Size is image i's size in bytes.
func (t *ImageTable) Size(i int) int64 {
	r := t.row(i)
	if r.flags&rowOddSize != 0 {
		return t.sizes[int32(i)]
	}
	return int64(r.a&sizeMask | (r.b&sizeMask)<<sizeBits)
}

// timesOf are image i's push and last pull, zero where unknown.
func (t *ImageTable) timesOf(i int) (pushed, pulled time.Time) {
	r := t.row(i)
	if r.flags&rowOddTimes != 0 {
		ts := t.times[int32(i)]
		return ts[0].UTC(), ts[1].UTC()
	}
	if r.flags&rowPushed != 0 {
		pushed = time.UnixMilli(int64(r.a >> sizeBits)).UTC()
	}
	if r.flags&rowPulled != 0 {
		pulled = time.UnixMilli(int64(r.b >> sizeBits)).UTC()
	}
	return pushed, pulled
}

// MediaType is image i's manifest media type.
func (t *ImageTable) MediaType(i int) string {
	if c := t.row(i).media; c != mediaOther {
		return mediaCodes[c]
	}
	return t.media[int32(i)]
}

// IsIndex reports whether image i is an index.
func (t *ImageTable) IsIndex(i int) bool { return IsIndex(t.MediaType(i)) }

// SetChildren records what index i lists; known says its body was read.
func (t *ImageTable) SetChildren(i int, children []string, known bool) {
	if known {
		t.row(i).flags |= rowChildrenKnown
	}
	if len(children) > 0 {
		setAside(&t.children, int32(i), children)
	}
}

// Trim gives back the room appends left at the end of the table: a lister
// calls it when a repository is listed.
func (t *ImageTable) Trim() {
	if len(t.chunks) > 0 {
		last := &t.chunks[len(t.chunks)-1]
		*last = slices.Clip(slices.Clone(*last))
	}
	t.chunks = slices.Clip(t.chunks)
	t.tagData = slices.Clip(slices.Clone(t.tagData))
}

// At materializes image i. Its Children are the table's: read them, never
// change them.
func (t *ImageTable) At(i int) Image {
	r := t.row(i)
	img := Image{Digest: t.Digest(i), SizeBytes: t.Size(i), MediaType: t.MediaType(i),
		ChildrenKnown: r.flags&rowChildrenKnown != 0, Children: t.children[int32(i)]}
	img.PushedAt, img.LastPull = t.timesOf(i)
	if r.flags&rowOddTags != 0 {
		img.Tags = t.oddTags[int32(i)]
	} else if tags := t.tagData[t.tagsStart(i):r.tagsEnd]; len(tags) > 0 {
		img.Tags = make([]string, 0, bytes.Count(tags, []byte{tagEnd}))
		for len(tags) > 0 {
			k := bytes.IndexByte(tags, tagEnd)
			img.Tags = append(img.Tags, string(tags[:k]))
			tags = tags[k+1:]
		}
	}
	return img
}

// All yields every image, materialized one at a time.
func (t *ImageTable) All() iter.Seq2[int, Image] {
	return func(yield func(int, Image) bool) {
		for i := range t.n {
			if !yield(i, t.At(i)) {
				return
			}
		}
	}
}

// Slice materializes every image (one repository's, while it is planned).
func (t *ImageTable) Slice() []Image {
	out := make([]Image, t.n)
	for i := range t.n {
		out[i] = t.At(i)
	}
	return out
}
