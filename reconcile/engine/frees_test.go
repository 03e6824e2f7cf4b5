package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/reconcile/engine"
)

// testAddresses is a unit no record keeps (Key ""), said in words.
var testAddresses = &amount.Unit{Name: "subnet addresses", Say: func(n int64) string { return strings.Repeat("x", int(n)) + " addresses" }}

func TestDecisionJSONRecordsKeyedAmounts(t *testing.T) {
	d := engine.Decision{Kind: "fake", ID: "a", Action: engine.Delete, Frees: amount.Free(40, testGB, amount.Amount{N: 9, Unit: testAddresses})}
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
