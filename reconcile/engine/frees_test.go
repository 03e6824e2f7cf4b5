package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"reclaim.dev/reclaim/reconcile/engine"
)

// testAddresses is a unit no record keeps (Key ""), said in words.
var testAddresses = &engine.Unit{Name: "subnet addresses", Say: func(n int64) string { return strings.Repeat("x", int(n)) + " addresses" }}

// testImages is counted, never said (Say nil).
var testImages = &engine.Unit{Name: "images"}

func TestFreesAreTheKindsAmounts(t *testing.T) {
	f := engine.Free(300, testGB, engine.Amount{N: 2, Unit: testAddresses}).In("p/r/SSD")
	if f.Of(testGB) != 300 || f.Of(testAddresses) != 2 || f.Of(testImages) != 0 || f.Pool != "p/r/SSD" {
		t.Fatalf("%+v", f)
	}
	if got := f.String(); got != "300 GB, xx addresses" {
		t.Fatalf("said %q", got)
	}
	// Only a unit recorded under a schema key reaches the JSON.
	if f.Keyed(engine.KeySizeGB) != 300 || f.Keyed(engine.KeyBytes) != 0 {
		t.Fatalf("keyed %d %d", f.Keyed(engine.KeySizeGB), f.Keyed(engine.KeyBytes))
	}
	if s := engine.Free(5, testImages).String(); s != "" {
		t.Fatalf("an unsaid unit was said: %q", s)
	}
}

func TestTotalAddsByUnitInOrderOfAppearance(t *testing.T) {
	var tot engine.Total
	tot.Add(engine.Free(1, testAddresses))
	tot.Add(engine.Frees{Amounts: [2]engine.Amount{{N: 100, Unit: testGB}}, Cost: 2.5})
	tot.Add(engine.Free(50, testGB, engine.Amount{N: 2, Unit: testAddresses}))
	tot.Add(engine.Free(7, testImages))
	if tot.Of(testGB) != 150 || tot.Of(testAddresses) != 3 || tot.Of(testImages) != 7 || tot.Cost != 2.5 {
		t.Fatalf("%+v", tot)
	}
	if got := tot.String(); got != "xxx addresses, 150 GB" {
		t.Fatalf("said %q", got)
	}
	if got := (engine.Total{}).String(); got != "" {
		t.Fatalf("an empty total said %q", got)
	}
}

func TestDecisionJSONRecordsKeyedAmounts(t *testing.T) {
	d := engine.Decision{Kind: "fake", ID: "a", Action: engine.Delete, Frees: engine.Free(40, testGB, engine.Amount{N: 9, Unit: testAddresses})}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["sizeGB"] != float64(40) || m["bytes"] != nil {
		t.Fatalf("%s", b)
	}
}
