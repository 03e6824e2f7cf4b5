package kind

import (
	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Limits are the engine's limits a kind's safety settings give, the one
// place they are read: a kind's Limits starts here and adds only what is
// its own (batch size, wording, an opt-out key that is not protectTag).
// size is the unit the kind's deletions free; maxDeleteSizePerRun is
// counted in whole units of it, rounded down, so a 5Ti cap on GiB disks is
// 5120 of them. No size unit (nil, or Bytes 0): no size cap.
func Limits(s config.Safety, size *amount.Unit) engine.Limits {
	l := engine.Limits{Grace: s.Grace.Std(), MinAge: s.MinAge.Std(), MaxDeletes: s.MaxDeletesPerRun,
		MaxDeletePercent: s.MaxDeletePercent.Fraction(), BreakerCandidates: s.BreakerCandidates, OptOutKey: s.ProtectTag}
	if size != nil && size.Bytes > 0 && s.MaxDeleteSizePerRun > 0 {
		l.MaxFrees = amount.Amount{N: int64(s.MaxDeleteSizePerRun) / size.Bytes, Unit: size}
	}
	return l
}
