package amount_test

import (
	"fmt"
	"strings"
	"testing"

	"reclaim.dev/reclaim/base/amount"
)

// testGB is a unit recorded under a schema key, said in words.
var testGB = &amount.Unit{Name: "GB", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GB", n) }}

// testAddresses is a unit no record keeps (Key ""), said in words.
var testAddresses = &amount.Unit{Name: "subnet addresses", Say: func(n int64) string { return strings.Repeat("x", int(n)) + " addresses" }}

// testImages is counted, never said (Say nil).
var testImages = &amount.Unit{Name: "images"}

func TestFreesAreTheKindsAmounts(t *testing.T) {
	f := amount.Free(300, testGB, amount.Amount{N: 2, Unit: testAddresses}).In("p/r/SSD")
	if f.Of(testGB) != 300 || f.Of(testAddresses) != 2 || f.Of(testImages) != 0 || f.Pool != "p/r/SSD" {
		t.Fatalf("%+v", f)
	}
	if got := f.String(); got != "300 GB, xx addresses" {
		t.Fatalf("said %q", got)
	}
	// Only a unit recorded under a schema key reaches the JSON.
	if f.Keyed(amount.KeySizeGB) != 300 || f.Keyed(amount.KeyBytes) != 0 {
		t.Fatalf("keyed %d %d", f.Keyed(amount.KeySizeGB), f.Keyed(amount.KeyBytes))
	}
	if s := amount.Free(5, testImages).String(); s != "" {
		t.Fatalf("an unsaid unit was said: %q", s)
	}
}

func TestTotalAddsByUnitInOrderOfAppearance(t *testing.T) {
	var tot amount.Total
	tot.Add(amount.Free(1, testAddresses))
	tot.Add(amount.Frees{Amounts: [2]amount.Amount{{N: 100, Unit: testGB}}, Cost: 2.5})
	tot.Add(amount.Free(50, testGB, amount.Amount{N: 2, Unit: testAddresses}))
	tot.Add(amount.Free(7, testImages))
	if tot.Of(testGB) != 150 || tot.Of(testAddresses) != 3 || tot.Of(testImages) != 7 || tot.Cost != 2.5 {
		t.Fatalf("%+v", tot)
	}
	if got := tot.String(); got != "xxx addresses, 150 GB" {
		t.Fatalf("said %q", got)
	}
	if got := (amount.Total{}).String(); got != "" {
		t.Fatalf("an empty total said %q", got)
	}
}
