// Package amount is what deleting a resource frees, in the kinds' own units:
// a kind declares its units (GB of disk quota, images, subnet addresses),
// and says in them what each of its resources frees (Frees); the engine adds
// up amounts of one unit (Total), caps them and reports them, and knows none
// of the units.
package amount

import (
	"fmt"
	"strings"
)

// Unit is what a kind counts what a deletion frees in. A kind declares each
// of its units once (a package variable) and names it in its proposals; the
// engine adds up amounts of one unit, caps them and says them, and knows
// none of them.
type Unit struct {
	// Name is the unit's plural, for a cap's message and for an amount
	// without Say ("subnet addresses").
	Name string
	// Key is the amount's field in the JSON plan, the results, pending state
	// and the audit log: KeySizeGB or KeyBytes (the fields schema v1 has);
	// "" keeps it out of them.
	Key string
	// Say says an amount ("300 GB", "1 subnet address"). nil: the amount is
	// counted (headroom, caps) but not said in reports.
	Say func(n int64) string
	// Bytes is one of the unit in bytes, for a unit of size (GiB: 1<<30):
	// a size cap written in bytes is counted in it. 0: not a size.
	Bytes int64
}

// The fields of schema v1 an amount can be recorded in (Unit.Key).
const (
	KeySizeGB = "sizeGB"
	KeyBytes  = "bytes"
)

// Amount is a quantity of a unit.
type Amount struct {
	N    int64
	Unit *Unit
}

// String says the amount in its unit's words ("" when there is nothing to say).
func (a Amount) String() string {
	switch {
	case a.Unit == nil:
		return ""
	case a.Unit.Say != nil:
		return a.Unit.Say(a.N)
	}
	return fmt.Sprintf("%d %s", a.N, a.Unit.Name)
}

// GiB is the bytes of a cloud's GB: GCE's disk sizes and quotas and the
// clouds' storage prices count GiB.
const GiB = 1 << 30

// Frees is what deleting a resource frees: the amounts its kind names, and
// what keeping it costs. The amounts are a fixed pair, not a slice: a fleet's
// plan holds 200,000 decisions, and no kind frees more than two units.
type Frees struct {
	Amounts [2]Amount
	// Cost is what keeping it costs a month, in the plan's currency (set
	// by the engine from a kind that prices its resources, engine.Pricer; 0
	// when unpriced).
	Cost float64
	// Pool names the quota the amounts count against (project/region/metric,
	// a repository, a subnet), so headroom can add up what the plan frees.
	Pool string
}

// Free is what a resource frees: n of unit u, then any others.
func Free(n int64, u *Unit, more ...Amount) Frees {
	if len(more) > 1 {
		panic("amount.Free: a decision frees at most two units")
	}
	f := Frees{Amounts: [2]Amount{{N: n, Unit: u}}}
	if len(more) == 1 {
		f.Amounts[1] = more[0]
	}
	return f
}

// In names the pool the amounts count against.
func (f Frees) In(pool string) Frees {
	f.Pool = pool
	return f
}

// Of is how much of unit u it frees.
func (f Frees) Of(u *Unit) int64 {
	var n int64
	for _, a := range f.Amounts {
		if a.Unit == u {
			n += a.N
		}
	}
	return n
}

// Keyed is how much it frees of the units recorded under key (KeySizeGB).
func (f Frees) Keyed(key string) int64 {
	var n int64
	for _, a := range f.Amounts {
		if a.Unit != nil && a.Unit.Key == key {
			n += a.N
		}
	}
	return n
}

// String says what it frees, in the one wording every report uses.
func (f Frees) String() string { return say(f.Amounts[:]) }

// Total adds up what many deletions free, of any number of units, in the
// order the units first appear.
type Total struct {
	Amounts []Amount
	Cost    float64
}

// Add adds f's amounts and cost.
func (t *Total) Add(f Frees) {
	t.Cost += f.Cost
	for _, a := range f.Amounts {
		if a.Unit == nil {
			continue
		}
		i := 0
		for i < len(t.Amounts) && t.Amounts[i].Unit != a.Unit {
			i++
		}
		if i == len(t.Amounts) {
			t.Amounts = append(t.Amounts, Amount{Unit: a.Unit})
		}
		t.Amounts[i].N += a.N
	}
}

// Of is how much of unit u the total frees.
func (t Total) Of(u *Unit) int64 {
	for _, a := range t.Amounts {
		if a.Unit == u {
			return a.N
		}
	}
	return 0
}

// String says the total: "300 GB, 8436 subnet addresses"; "" when nothing.
func (t Total) String() string { return say(t.Amounts) }

func say(as []Amount) string {
	var parts []string
	for _, a := range as {
		if a.N > 0 && a.Unit != nil && a.Unit.Say != nil {
			parts = append(parts, a.Unit.Say(a.N))
		}
	}
	return strings.Join(parts, ", ")
}
