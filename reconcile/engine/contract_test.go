package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
)

// engineDecides are the fields of a Decision only the engine sets: what a
// kind proposes never names them.
var engineDecides = []string{"Kind", "Action", "Held", "Owner", "OrphanSince", "DeletableAfter", "notes", "terminal", "seq", "view"}

// What a kind says and what the engine decides are two types: a Proposal
// has none of the engine's fields, so no proposal can make the engine
// delete but by being a Candidate the rules then let go; every other field
// of a Decision is one the kind proposes, of the same type.
func TestProposalSaysNothingTheEngineDecides(t *testing.T) {
	prop := reflect.TypeFor[Proposal]()
	for _, name := range engineDecides {
		if _, ok := prop.FieldByName(name); ok {
			t.Errorf("Proposal has %s: only the engine decides it", name)
		}
	}
	dec := reflect.TypeFor[Decision]()
	for i := range dec.NumField() {
		f := dec.Field(i)
		if slices.Contains(engineDecides, f.Name) {
			continue
		}
		pf, ok := prop.FieldByName(f.Name)
		switch {
		case !ok:
			t.Errorf("Decision.%s is neither the engine's (engineDecides) nor a Proposal's field", f.Name)
		case pf.Type != f.Type:
			t.Errorf("Decision.%s is a %s, Proposal.%s a %s", f.Name, f.Type, f.Name, pf.Type)
		}
	}
}

// A decision starts as what its proposal says, every field of it, and
// nothing the engine decides.
func TestDecisionStartsAsTheProposal(t *testing.T) {
	p := Proposal{ID: "id", Name: "name", Reason: "why", Class: "orphan", Frees: amount.Free(1, &amount.Unit{Name: "GB"}), Detail: struct{}{},
		Group: "g", After: []string{"first"}, Identity: "uid", Candidate: true, Created: time.Unix(1, 0)}
	d := p.decision("fake")
	pv, dv := reflect.ValueOf(p), reflect.ValueOf(d)
	for i := range dv.NumField() {
		name := dv.Type().Field(i).Name
		got := dv.Field(i)
		switch {
		case name == "Kind":
			if d.Kind != "fake" {
				t.Errorf("Kind %q, want the kind's name", d.Kind)
			}
		case slices.Contains(engineDecides, name):
			if !got.IsZero() {
				t.Errorf("%s is set before the engine decided it: %v", name, got)
			}
		default:
			want := pv.FieldByName(name)
			if want.IsZero() {
				t.Fatalf("the test proposal sets no %s: give it one", name)
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Errorf("%s = %v, want the proposal's %v", name, got, want)
			}
		}
	}
}
