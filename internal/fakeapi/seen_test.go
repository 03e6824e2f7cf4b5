package fakeapi

import (
	"slices"
	"testing"
)

func TestSeenRecordsEachPermissionOnce(t *testing.T) {
	Saw("ecr:DescribeImages")
	Saw("ecr:DescribeImages")
	Saw("")
	Saw("compute.disks.get")
	got := Seen()
	if !slices.Contains(got, "ecr:DescribeImages") || !slices.Contains(got, "compute.disks.get") || slices.Contains(got, "") {
		t.Fatalf("Seen() = %v", got)
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("Seen() = %v, want sorted and without duplicates", got)
	}
}
