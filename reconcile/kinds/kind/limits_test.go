package kind

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/engine"
)

func TestLimitsCountSizeInTheKindsUnit(t *testing.T) {
	gib := &amount.Unit{Name: "GiB", Bytes: amount.GiB}
	s := config.Safety{ProtectTag: "keep", Grace: config.Duration(time.Hour), MinAge: config.Duration(2 * time.Hour),
		Caps: config.Caps{MaxDeletesPerRun: 3, MaxDeletePercent: 0.5, MaxDeleteSizePerRun: 10<<30 + 1<<29, BreakerCandidates: 9}}
	l := Limits(s, gib)
	want := engine.Limits{Grace: time.Hour, MinAge: 2 * time.Hour, MaxDeletes: 3, MaxDeletePercent: 0.5, BreakerCandidates: 9, OptOutKey: "keep",
		MaxFrees: amount.Amount{N: 10, Unit: gib}} // 10.5 GiB holds what 10 does
	if l.Grace != want.Grace || l.MinAge != want.MinAge || l.MaxDeletes != want.MaxDeletes || l.MaxDeletePercent != want.MaxDeletePercent ||
		l.BreakerCandidates != want.BreakerCandidates || l.OptOutKey != want.OptOutKey || l.MaxFrees != want.MaxFrees {
		t.Fatalf("got %+v\nwant %+v", l, want)
	}
	for _, u := range []*amount.Unit{nil, {Name: "images"}} {
		if l := Limits(s, u); l.MaxFrees.Unit != nil {
			t.Errorf("unit %v: size cap %v, want none for a unit that is no size", u, l.MaxFrees)
		}
	}
	s.MaxDeleteSizePerRun = 0
	if l := Limits(s, gib); l.MaxFrees.Unit != nil {
		t.Errorf("0 caps %v, want no cap", l.MaxFrees)
	}
}
