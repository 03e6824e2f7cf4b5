package engine_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/reconcile/engine"
)

// digestID is a content-addressed id of the fake kind: fake/GROUP@sha256:…
func digestID(group string, n int) string {
	return fmt.Sprintf("fake/%s@sha256:%x", group, sha256.Sum256([]byte(fmt.Sprint(group, n))))
}

// digestOrphan is an orphan whose id is a digest's, with no identity: its
// clock is packed.
func digestOrphan(group string, n int) engine.Proposal {
	p := orphan(fmt.Sprintf("%s-%d", group, n))
	p.ID, p.Identity = digestID(group, n), ""
	return p
}

// Packed clocks survive JSON as they were, exactly, with what a person was
// announced, next to the clocks that stay in Resources; and a state written
// before packing (image clocks in Resources) is packed by the next plan.
func TestDigestClocksRoundTrip(t *testing.T) {
	st := engine.NewState()
	at := t0.Add(-90*time.Minute + 123456789)
	for n := range 50 {
		st.Seen(digestID("a", n), "", at.Add(time.Duration(n%3)*time.Hour))
	}
	st.Seen(digestID("b", 1), "", at)
	st.Seen(fakeID("disk"), "v1", at)
	st.Seen(digestID("b", 2), "with-identity", at) // an identity: not packed
	if len(st.Resources) != 2 {
		t.Fatalf("Resources hold %d clocks, want the 2 not packable", len(st.Resources))
	}
	p := &engine.Plan{GeneratedAt: t0, Decisions: []engine.Decision{{ID: digestID("a", 7), Action: engine.Mark}}}
	if n := st.Announce(p, t0.Add(time.Minute)); n != 1 {
		t.Fatalf("announced %d", n)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back engine.State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Clocks(); got != 53 {
		t.Fatalf("%d clocks after a round trip, want 53", got)
	}
	for n := range 50 {
		e, ok := back.Clock(digestID("a", n))
		if want := at.Add(time.Duration(n%3) * time.Hour); !ok || !e.FirstSeen.Equal(want) {
			t.Fatalf("clock %d: %v %v, want %v", n, ok, e.FirstSeen, want)
		}
		if ann := !e.Announced.IsZero(); ann != (n == 7) || ann && !e.Announced.Equal(t0.Add(time.Minute)) {
			t.Fatalf("clock %d announced %v", n, e.Announced)
		}
	}
	if e, ok := back.Clock(digestID("b", 2)); !ok || e.Identity != "with-identity" {
		t.Fatalf("the clock with an identity: %v %+v", ok, e)
	}
	if _, ok := back.Clock(digestID("a", 99)); ok {
		t.Fatal("a clock never set")
	}

	old := engine.NewState()
	old.Resources[digestID("a", 1)] = engine.Entry{FirstSeen: at}
	if c := old.Clone(); len(c.Resources) != 0 || c.Clocks() != 1 {
		t.Fatalf("an older state's image clock was not packed: %d in Resources, %d in all", len(c.Resources), c.Clocks())
	}

	var bad engine.State
	if err := json.Unmarshal([]byte(`{"version":2,"digests":{"fake/a":"AQ=="}}`), &bad); err == nil {
		t.Fatal("a truncated group decoded")
	}
}

// A packed clock is kept while its resource is a candidate, forgotten when
// it is proposed as kept or its group's listing no longer shows it as a
// candidate, and kept when the group's presence is unknown (a failed
// listing proves nothing); a dropped clock (a skip) stays dropped.
func TestDigestClocksFollowTheRules(t *testing.T) {
	a, b, c := digestOrphan("g", 1), digestOrphan("g", 2), digestOrphan("g", 3)
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{a, b, c}}
	first := build(k, engine.NewState(), t0)
	for _, p := range []engine.Proposal{a, b, c} {
		if e, ok := first.State.Clock(p.ID); !ok || !e.FirstSeen.Equal(t0) {
			t.Fatalf("%s: clock %v %v", p.Name, ok, e.FirstSeen)
		}
	}
	used := b
	used.Candidate = false
	k.items = []engine.Proposal{a, used} // c: listed no more as a candidate
	second := build(k, first.State, t0.Add(time.Hour))
	if _, ok := second.State.Clock(b.ID); ok {
		t.Error("a resource in use kept its clock")
	}
	if _, ok := second.State.Clock(c.ID); ok {
		t.Error("a resource no longer a candidate kept its clock")
	}
	if e, ok := second.State.Clock(a.ID); !ok || !e.FirstSeen.Equal(t0) {
		t.Errorf("the candidate's clock: %v %v", ok, e.FirstSeen)
	}
	k.items, k.unknown = nil, true
	third := build(k, first.State, t0.Add(time.Hour))
	if third.State.Clocks() != 3 {
		t.Errorf("an unknown listing dropped clocks: %d left of 3", third.State.Clocks())
	}
	third.State.Apply(engine.Journal{Dropped: []string{a.ID}})
	if _, ok := third.State.Clock(a.ID); ok {
		t.Error("a journal's dropped clock survived")
	}
	k.items, k.unknown = []engine.Proposal{a}, false
	if d := build(k, third.State, t0.Add(8*time.Hour)); d.Decisions[0].Action != engine.Mark {
		t.Errorf("a dropped clock's candidate: %s, want its clock started anew", d.Decisions[0].Action)
	}
}

// A million packed clocks (one run's worth, in 100 groups) fit the stock
// ConfigMap store's 16 chunks of 960 KiB gzipped with room to spare.
func TestDigestClocksOfAMillionFitTheStore(t *testing.T) {
	testenv.Scale(t)
	st := engine.NewState()
	for g := range 100 {
		group := fmt.Sprintf("ecr:123456789012/us-east-1/team/svc-%03d", g)
		for n := range 10000 {
			h := sha256.Sum256(fmt.Appendf(nil, "%d/%d", g, n))
			st.Seen(fmt.Sprintf("%s@sha256:%x", group, h), "", t0.Add(-time.Duration(n%5)*time.Hour))
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(b)
	w.Close()
	const stock = 16 * (1<<20 - 64<<10)
	t.Logf("1,000,000 clocks: %d bytes JSON, %d gzipped (%.1f per clock), %.0f%% of the stock store", len(b), gz.Len(), float64(gz.Len())/1e6, 100*float64(gz.Len())/stock)
	if gz.Len() > stock*3/4 {
		t.Fatalf("a million clocks take %d bytes gzipped, more than 3/4 of the stock store's %d", gz.Len(), stock)
	}
}

// A plan's state shares the clocks of the state it was planned from until
// either writes one: a write to one is never seen by the other.
func TestDigestClocksOfAClonedStateAreItsOwn(t *testing.T) {
	st := engine.NewState()
	for n := range 10 {
		st.Seen(digestID("g", n), "", t0)
	}
	b, _ := json.Marshal(st)
	var loaded engine.State
	if err := json.Unmarshal(b, &loaded); err != nil {
		t.Fatal(err)
	}
	next := loaded.Clone()
	loaded.Seen(digestID("g", 1), "", t0.Add(time.Hour))
	loaded.DropClock(digestID("g", 2))
	next.Seen(digestID("g", 3), "", t0.Add(2*time.Hour))
	next.DropClock(digestID("g", 4))
	for _, c := range []struct {
		st   *engine.State
		n    int
		want time.Time // zero: dropped
	}{
		{&loaded, 1, t0.Add(time.Hour)}, {&loaded, 2, time.Time{}}, {&loaded, 3, t0}, {&loaded, 4, t0},
		{&next, 1, t0}, {&next, 2, t0}, {&next, 3, t0.Add(2 * time.Hour)}, {&next, 4, time.Time{}},
	} {
		e, ok := c.st.Clock(digestID("g", c.n))
		if ok != !c.want.IsZero() || ok && !e.FirstSeen.Equal(c.want) {
			t.Errorf("clock %d of the %s state: %v %v, want %v", c.n, map[bool]string{true: "loaded", false: "cloned"}[c.st == &loaded], ok, e.FirstSeen, c.want)
		}
	}
}

// WriteJSON writes what json.Marshal does, packed clocks and all, and an
// empty state as well.
func TestWriteJSONIsMarshal(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	full := engine.NewState()
	for n := range 300 {
		full.Seen(digestID(fmt.Sprintf("g%d", n%3), n), "", at.Add(time.Duration(n%4)*time.Hour))
	}
	full.Seen("fake/disk-1", "v1", at)
	full.Pending = map[string]engine.Pending{"fake/disk-2": {Kind: "fake", Started: at, Reason: "orphan \"quoted\""}}
	full.LastSuccess = at
	for _, st := range []engine.State{engine.NewState(), full} {
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := st.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b.Bytes(), &g); err != nil {
			t.Fatalf("WriteJSON wrote no JSON: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("WriteJSON:\n%s\njson.Marshal:\n%s", b.String(), want)
		}
	}
	if full.Clocks() != 301 {
		t.Fatalf("%d clocks", full.Clocks())
	}
}
