package fakeapi

import (
	"io"
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

func TestCheckSeenFailsOnAnUndeclaredPermission(t *testing.T) {
	Saw("ecr:DescribeImages")
	if CheckSeen(io.Discard, Seen()) != 0 {
		t.Error("CheckSeen(everything seen) != 0")
	}
	if CheckSeen(io.Discard, nil) != 1 {
		t.Error("CheckSeen(nothing declared) != 1")
	}
}
