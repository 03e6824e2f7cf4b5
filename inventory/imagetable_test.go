package inventory_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// Every image comes back from the table as it went in, whatever its shape.
func TestImageTableRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)
	many := make([]string, 70000)
	for i := range many {
		many[i] = "t" + strings.Repeat("x", i%7)
	}
	in := []inventory.Image{
		{Digest: "sha256:" + strings.Repeat("0a", 32), Tags: []string{"v1", "latest"}, PushedAt: at, LastPull: at.Add(time.Hour),
			SizeBytes: 1 << 40, MediaType: inventory.MediaTypeOCIManifest},
		{Digest: "sha256:" + strings.Repeat("ff", 32), PushedAt: at, MediaType: inventory.MediaTypeDockerList,
			Children: []string{"sha256:" + strings.Repeat("0a", 32)}, ChildrenKnown: true},
		{Digest: "sha256:" + strings.Repeat("AB", 32), PushedAt: at, MediaType: "application/vnd.example+json"}, // upper-case hex: kept as written
		{Digest: "sha512:" + strings.Repeat("1", 128), MediaType: inventory.MediaTypeOCIIndex, ChildrenKnown: true},
		{Digest: "sha256:short", Tags: many, PushedAt: time.Unix(0, 0).UTC()}, // more tags than a row counts; the epoch is a time
		{Digest: "sha256:" + strings.Repeat("12", 32), MediaType: ""},
		// What ECR sends packs: whole milliseconds, sizes under 1 TiB.
		{Digest: "sha256:" + strings.Repeat("34", 32), Tags: []string{"", "a"}, PushedAt: at.Truncate(time.Second), LastPull: at.Truncate(time.Millisecond),
			SizeBytes: 1<<40 - 1, MediaType: inventory.MediaTypeDockerManifest},
		{Digest: "sha256:" + strings.Repeat("56", 32), LastPull: at.Truncate(time.Millisecond), SizeBytes: 1 << 20},
		// And what does not is kept aside.
		{Digest: "sha256:" + strings.Repeat("78", 32), Tags: []string{"a\x00b"}, PushedAt: time.Unix(-1, 0).UTC(), SizeBytes: -1},
		{Digest: "sha256:" + strings.Repeat("9a", 32), PushedAt: time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC), LastPull: at.Truncate(time.Millisecond)},
	}
	// Enough rows to fill more than one chunk.
	for n := range 2500 {
		in = append(in, inventory.Image{Digest: fmt.Sprintf("sha256:%064x", n), Tags: []string{fmt.Sprint("build-", n)},
			PushedAt: at.Add(time.Duration(n) * time.Second).Truncate(time.Millisecond), SizeBytes: int64(n) << 22, MediaType: inventory.MediaTypeOCIManifest})
	}
	tab := inventory.NewImageTable(in...)
	if tab.Len() != len(in) {
		t.Fatalf("%d rows, want %d", tab.Len(), len(in))
	}
	for i, want := range in {
		got := tab.At(i)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("image %d:\n got %+v\nwant %+v", i, short(got), short(want))
		}
		if tab.Digest(i) != want.Digest || tab.MediaType(i) != want.MediaType || tab.IsIndex(i) != want.IsIndex() {
			t.Errorf("image %d: accessors disagree with At", i)
		}
	}
	if got := tab.Slice(); !reflect.DeepEqual(got, in) {
		t.Error("Slice differs from the images added")
	}
	n := 0
	for i, img := range tab.All() {
		if i != n || img.Digest != in[i].Digest {
			t.Errorf("All yielded %d %s at %d", i, img.Digest, n)
		}
		n++
	}
	tab.Trim()
	if got := tab.Slice(); !reflect.DeepEqual(got, in) {
		t.Error("Trim changed the images")
	}
	tab.SetChildren(0, []string{"sha256:" + strings.Repeat("ff", 32)}, true)
	if got := tab.At(0); !got.ChildrenKnown || len(got.Children) != 1 {
		t.Errorf("SetChildren: %+v", short(got))
	}
}

// The table keeps no string the caller may reuse: tags are copied.
func TestImageTableCopiesTags(t *testing.T) {
	buf := []byte("build-1")
	tag := string(buf) // a fresh string, but make sure Add does not alias the caller's slice
	tags := []string{tag}
	tab := inventory.NewImageTable(inventory.Image{Digest: "sha256:" + strings.Repeat("0b", 32), Tags: tags})
	tags[0] = "changed"
	if got := tab.At(0).Tags; len(got) != 1 || got[0] != "build-1" {
		t.Fatalf("tags %v after the caller changed its slice", got)
	}
}

func short(img inventory.Image) inventory.Image {
	if len(img.Tags) > 3 {
		img.Tags = append(img.Tags[:3:3], "…")
	}
	return img
}

// HasDigest tells apart digests that share their first bytes (made-up test
// digests do), before Drop and after it, and Drop keeps the count.
func TestRepoListingDropKeepsCountAndDigests(t *testing.T) {
	d := func(n int) string { return "sha256:" + strings.Repeat("0", 62) + fmt.Sprintf("%02x", n) }
	rl := inventory.RepoListing{Load: func(rl *inventory.RepoListing) {
		rl.Images = inventory.NewImageTable(inventory.Image{Digest: d(1)}, inventory.Image{Digest: d(2)}, inventory.Image{Digest: "sha512:odd"})
		rl.Complete = true
	}}
	rl.Ensure()
	check := func(when string) {
		for _, c := range []struct {
			digest string
			want   bool
		}{{d(1), true}, {d(2), true}, {"sha512:odd", true}, {d(3), false}, {"sha512:other", false}} {
			if got := rl.HasDigest(c.digest); got != c.want {
				t.Errorf("%s: HasDigest(%s) = %v", when, c.digest, got)
			}
		}
	}
	check("listed")
	rl.Drop()
	check("dropped")
	if rl.Len() != 3 || rl.Images.Len() != 0 {
		t.Fatalf("after Drop: Len %d, rows %d", rl.Len(), rl.Images.Len())
	}
	// An eager listing is its caller's: Drop keeps it whole.
	eager := inventory.RepoListing{Images: inventory.NewImageTable(inventory.Image{Digest: d(1)})}
	eager.Drop()
	if eager.Images.Len() != 1 || eager.Len() != 1 {
		t.Fatalf("Drop freed an eager listing: %d rows", eager.Images.Len())
	}
	// Rows the planner keeps: Drop keeps them, and HasDigest still answers.
	rl = inventory.RepoListing{Load: func(rl *inventory.RepoListing) {
		rl.Images = inventory.NewImageTable(inventory.Image{Digest: d(1)}, inventory.Image{Digest: d(2)}, inventory.Image{Digest: "sha512:odd"})
		rl.Complete = true
	}}
	rl.Ensure()
	rl.KeepRows()
	rl.Drop()
	check("kept")
	if rl.Len() != 3 || rl.Images.Len() != 3 {
		t.Fatalf("after KeepRows and Drop: Len %d, rows %d", rl.Len(), rl.Images.Len())
	}
}

// A lazy listing loads once, whatever the number of Ensures.
func TestRepoListingLoadsOnce(t *testing.T) {
	loads := 0
	rl := inventory.RepoListing{Load: func(rl *inventory.RepoListing) {
		loads++
		rl.Images, rl.Complete = inventory.NewImageTable(inventory.Image{Digest: "sha256:" + strings.Repeat("ab", 32)}), true
	}}
	if rl.Listed() || rl.Len() != 0 {
		t.Fatal("listed before Ensure")
	}
	rl.Ensure()
	rl.Ensure()
	if loads != 1 || !rl.Listed() || rl.Len() != 1 || !rl.Complete {
		t.Fatalf("%d loads, listed %v, %d images", loads, rl.Listed(), rl.Len())
	}
}

// DecodeSHA256Hex takes 64 lowercase hex digits, and only those.
func TestDecodeSHA256Hex(t *testing.T) {
	const good = "0123456789abcdef00ff10e0a5b6c7d8e9f0123456789abcdef0123456789abc"
	var b [32]byte
	if !inventory.DecodeSHA256Hex(&b, good) {
		t.Fatal("refused a canonical digest")
	}
	if want, _ := hex.DecodeString(good); !bytes.Equal(b[:], want) {
		t.Fatalf("decoded %x, want %x", b, want)
	}
	for _, bad := range []string{"", good[:63], good + "0", strings.ToUpper(good), good[:10] + "g" + good[11:], good[:63] + "/", good[:62] + "A0"} {
		if inventory.DecodeSHA256Hex(&b, bad) {
			t.Errorf("took %q", bad)
		}
	}
}
