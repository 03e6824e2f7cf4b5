package records

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/providers/bucket"
)

// listedRecords is a bucket in memory that lists, with a version per
// object (its content's MD5, as S3's ETag of a single-part put), and
// counts what it is asked.
type listedRecords struct {
	memRecords
	mu          sync.Mutex
	lists, gets int
	// listErr fails the listing; hide leaves keys out of it; sizes
	// replaces the listed size of keys.
	listErr error
	hide    map[string]bool
	sizes   map[string]int64
	// stale is what the next GET of a key returns instead of the object
	// (a store whose GET lags its listing), once.
	stale map[string][]byte
	// written is when the store says it wrote a key (its listing's
	// LastModified); unset, the listing says nothing.
	written map[string]time.Time
}

func etag(b []byte) string { return fmt.Sprintf("%q", fmt.Sprintf("%x", md5.Sum(b))) }

func (l *listedRecords) List(_ context.Context, prefix string) ([]bucket.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lists++
	if l.listErr != nil {
		return nil, l.listErr
	}
	var out []bucket.Object
	for k, b := range l.memRecords {
		if !strings.HasPrefix(k, prefix) || l.hide[k] {
			continue
		}
		size := int64(len(b))
		if s, ok := l.sizes[k]; ok {
			size = s
		}
		out = append(out, bucket.Object{Key: k, Version: etag(b), Size: size, Modified: l.written[k]})
	}
	return out, nil
}

func (l *listedRecords) Open(ctx context.Context, key string) (io.ReadCloser, string, error) {
	l.mu.Lock()
	l.gets++
	b, ok := l.stale[key]
	delete(l.stale, key)
	l.mu.Unlock()
	if !ok {
		var err error
		if b, err = l.memRecords.Get(ctx, key); err != nil {
			return nil, "", err
		}
	}
	return io.NopCloser(bytes.NewReader(b)), etag(b), nil
}

func (l *listedRecords) counts() (lists, gets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lists, gets = l.lists, l.gets
	l.lists, l.gets = 0, 0
	return lists, gets
}

func listedReader(l *listedRecords, now *time.Time) *Reader {
	rr := reader(l.memRecords, now, nil)
	rr.Store = l
	return rr
}

var recKey = published.Key("fleet", recPlace, "prod-a")

// recReadsAll is prod-a read by a deleter whose kinds read its images and
// workloads (ec2-interface, ecr-image).
var recReadsAll = func() kube.Target { t := recTarget; t.Images, t.Workloads = true, true; return t }()

// passAll is pass with recReadsAll.
func passAll(rr *Reader) inventory.ClusterRefs {
	rr.Begin(nil)
	return rr.Read(context.Background(), []kube.Target{recReadsAll})[0]
}

// A long-running deleter lists the records once a pass and reads only a
// record whose version changed: an unchanged one is not read again, a
// changed one is, and what it says is what the pass sees.
func TestRecordReaderReadsOnlyWhatChanged(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	for i, step := range []struct {
		change     bool
		pods, gets int
	}{{pods: 20, gets: 1}, {pods: 20, gets: 0}, {change: true, pods: 25, gets: 1}, {pods: 25, gets: 0}} {
		if step.change {
			l.put(t, 25, "uid-1", "", recT0.Add(10*time.Minute))
		}
		c := passAll(rr)
		lists, gets := l.counts()
		if !c.Complete || len(c.Pods) != step.pods || lists != 1 || gets != step.gets {
			t.Fatalf("pass %d: complete %v, %d pods, %d lists, %d gets; want complete, %d pods, 1 list, %d gets: %v",
				i, c.Complete, len(c.Pods), lists, gets, step.pods, step.gets, c.Problems)
		}
	}
}

// A record taken from memory is checked again each pass: once older than
// maxAge it holds, though it was not read again.
func TestRecordReaderRechecksAnUnchangedRecordsAge(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	if c, _ := pass(rr, nil); !c.Complete {
		t.Fatalf("a fresh record held: %v", c.Problems)
	}
	now = recT0.Add(4 * time.Hour) // maxAge is 3h
	c, _ := pass(rr, nil)
	if _, gets := l.counts(); gets != 1 {
		t.Fatalf("%d gets in two passes of an unchanged record, want 1", gets)
	}
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "more than fleet.records.maxAge") {
		t.Fatalf("a record older than maxAge, from memory: complete %v, %v", c.Complete, c.Problems)
	}
}

// The store's clock bounds the record's: a record that says it was read
// after the store wrote it (an agent whose clock runs ahead, or a record
// copied back with a new takenAt) is as old as its object, whether it is
// read or taken from memory, and the report says the agent's clock is
// ahead.
func TestRecordReaderBoundsTheReadTimeByTheStores(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0.Add(time.Hour)) // says it was read an hour after the store wrote it
	l.written = map[string]time.Time{recKey: recT0}
	rr := listedReader(l, &now)
	c, _ := pass(rr, nil)
	if !c.Complete || !c.ReadAt.Equal(recT0) || !strings.Contains(strings.Join(c.Problems, " "), "the agent's clock runs ahead") {
		t.Fatalf("a record written before its takenAt: complete %v, read at %v, want %v and a note: %v", c.Complete, c.ReadAt, recT0, c.Problems)
	}
	now = recT0.Add(3*time.Hour + time.Minute) // maxAge 3h: the object is past it, its takenAt is not
	c, _ = pass(rr, nil)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "the store wrote the record 3h1m0s ago") {
		t.Fatalf("a record whose object is older than maxAge, from memory: complete %v, %v", c.Complete, c.Problems)
	}
	// A store that says nothing leaves the record's own time.
	l.written = nil
	rr = listedReader(l, &now)
	if c, _ = pass(rr, nil); !c.Complete || !c.ReadAt.Equal(recT0.Add(time.Hour)) {
		t.Fatalf("no store time: complete %v, read at %v: %v", c.Complete, c.ReadAt, c.Problems)
	}
	// A store that wrote the object after its takenAt changes nothing.
	l.written = map[string]time.Time{recKey: recT0.Add(2 * time.Hour)}
	if c, _ = pass(rr, nil); !c.Complete || !c.ReadAt.Equal(recT0.Add(time.Hour)) || strings.Contains(strings.Join(c.Problems, " "), "clock") {
		t.Fatalf("written after its takenAt: complete %v, read at %v: %v", c.Complete, c.ReadAt, c.Problems)
	}
}

// A record the listing does not show is missing, though a GET would find
// it (or memory has it): the pass holds the cluster.
func TestRecordReaderHoldsARecordTheListingMisses(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	if c, _ := pass(rr, nil); !c.Complete {
		t.Fatalf("%v", c.Problems)
	}
	l.hide = map[string]bool{recKey: true}
	c, _ := pass(rr, nil)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "the bucket's listing has none") {
		t.Fatalf("a record the listing misses: complete %v, %v", c.Complete, c.Problems)
	}
}

// A failed listing is every record unreadable, named, even one memory
// holds at the version last listed.
func TestRecordReaderHoldsEveryRecordWhenTheListingFails(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	if c, _ := pass(rr, nil); !c.Complete {
		t.Fatalf("%v", c.Problems)
	}
	l.counts()
	l.listErr = errors.New("503 SlowDown")
	c, _ := pass(rr, nil)
	if _, gets := l.counts(); c.Complete || gets != 0 || !strings.Contains(strings.Join(c.Problems, " "), "listing s3://b/fleet/clusters/ failed") ||
		!strings.Contains(strings.Join(c.Problems, " "), "503 SlowDown") {
		t.Fatalf("a failed listing: complete %v, %d gets, %v", c.Complete, gets, c.Problems)
	}
	l.listErr = fmt.Errorf("list: %w", bucket.ErrDenied)
	if c, _ := pass(rr, nil); c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "s3:ListBucket") {
		t.Fatalf("a denied listing: complete %v, %v", c.Complete, c.Problems)
	}
}

// An object listed larger than a record may be gzipped is refused
// without a GET.
func TestRecordReaderDoesNotReadAnOversizedListedObject(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	rr.bound()
	l.sizes = map[string]int64{recKey: rr.Bounds.Object + 1}
	c, _ := pass(rr, nil)
	if _, gets := l.counts(); c.Complete || gets != 0 || !strings.Contains(strings.Join(c.Problems, " "), published.ErrTooLarge.Error()) {
		t.Fatalf("an oversized listed object: complete %v, %d gets, %v", c.Complete, gets, c.Problems)
	}
}

// What a GET read is remembered at the version the GET returned: a GET
// that returns an older object than the listing showed is read again the
// next pass, never taken for the listed version.
func TestRecordReaderRemembersTheVersionItRead(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	old := l.memRecords[recKey]
	l.put(t, 25, "uid-1", "", recT0.Add(10*time.Minute))
	l.stale = map[string][]byte{recKey: old}
	rr := listedReader(l, &now)
	if c := passAll(rr); len(c.Pods) != 20 {
		t.Fatalf("the lagging GET: %d pods, want the old record's 20", len(c.Pods))
	}
	c := passAll(rr)
	if _, gets := l.counts(); gets != 2 || len(c.Pods) != 25 {
		t.Fatalf("after a GET older than its listing: %d gets in two passes (want 2), %d pods (want the listed record's 25)", gets, len(c.Pods))
	}
}

// A deleter whose kinds read no workloads keeps none of a record's pods,
// and says so (WorkloadsListed false: what relies on them holds), but
// judges the record on all of it: a drop of its pods holds. What it kept
// is not reused for a deleter that reads them.
func TestRecordReaderKeepsWhatItsKindsRead(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	rr := listedReader(l, &now)
	c, seen := pass(rr, nil)
	if !c.Complete || len(c.Pods) != 0 || c.WorkloadsListed || c.ImagesListed {
		t.Fatalf("read without workloads: complete %v, %d pods, workloads listed %v, images listed %v", c.Complete, len(c.Pods), c.WorkloadsListed, c.ImagesListed)
	}
	if c := passAll(rr); len(c.Pods) != 20 || !c.WorkloadsListed {
		t.Fatalf("read with workloads after: %d pods, workloads listed %v", len(c.Pods), c.WorkloadsListed)
	}
	if _, gets := l.counts(); gets != 2 {
		t.Fatalf("%d gets, want 2: what was kept without workloads is not what a read of them needs", gets)
	}
	l.put(t, 2, "uid-1", "", recT0.Add(time.Minute))
	if c, _ := pass(rr, seen); c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "2 pods where it listed 20") {
		t.Fatalf("a drop of pods, read without workloads: complete %v, %v", c.Complete, c.Problems)
	}
}

// Decoded as it arrives, a gzip bomb costs at most its bound, and is
// refused as too large; a record that gzips better than streamRatio is
// read again whole (its trailer's claim its bound) and accepted.
func TestRecordReaderStreamsWithinItsBounds(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	bomb := testenv.GzipBomb(t, 600)
	other, third := recTarget, recTarget
	other.Name, other.CloudName = "prod-b", "prod-b"
	third.Name, third.CloudName = "prod-c", "prod-c"
	l.memRecords[published.Key("fleet", recPlace, "prod-b")] = bomb
	l.memRecords[published.Key("fleet", recPlace, "prod-c")] = bomb
	// A record of one pod repeated: it gzips far better than streamRatio.
	refs := inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true}
	for range 20000 {
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: "a", Name: "same", Phase: "Running"})
	}
	l.putRefs(t, refs, "uid-1", "", recT0)
	if body := l.memRecords[recKey]; gunzipped(t, body) < streamRatio*len(body) {
		t.Fatalf("the record gzips %d to %d: not better than %d times", gunzipped(t, body), len(body), streamRatio)
	}
	rr := listedReader(l, &now)
	rr.Begin(nil)
	rr.bound()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := rr.Read(context.Background(), []kube.Target{recReadsAll, other, third})
	runtime.ReadMemStats(&after)
	if !got[0].Complete || len(got[0].Pods) != 20000 {
		t.Fatalf("the record that gzips well: complete %v, %d pods, %v", got[0].Complete, len(got[0].Pods), got[0].Problems)
	}
	for _, c := range got[1:] {
		if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "maxRecordSize") {
			t.Fatalf("%s: complete %v, %v", c.Name, c.Complete, c.Problems)
		}
	}
	if _, gets := l.counts(); gets != 4 {
		t.Fatalf("%d gets, want 4: each record once, and the one that gzips well again whole", gets)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(rr.Bounds.Target/2) {
		t.Fatalf("reading the records allocated %d MiB, more than half the memory target %d MiB", alloc>>20, rr.Bounds.Target>>20)
	}
}

func gunzipped(t *testing.T, body []byte) int {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// A record cut short, decoded as it arrives, cannot be read: it holds,
// and says so, as one read whole does.
func TestRecordReaderStreamHoldsATruncatedRecord(t *testing.T) {
	l, now := &listedRecords{memRecords: memRecords{}}, recT0.Add(time.Hour)
	l.put(t, 20, "uid-1", "", recT0)
	l.memRecords[recKey] = l.memRecords[recKey][:len(l.memRecords[recKey])/2]
	c, _ := pass(listedReader(l, &now), nil)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "cannot be read") {
		t.Fatalf("a truncated record: complete %v, %v", c.Complete, c.Problems)
	}
}
