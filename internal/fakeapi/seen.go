package fakeapi

import (
	"maps"
	"slices"
	"sync"
)

// seen are the permissions the requests fakes served in this process needed:
// tests compare them with what reclaim declares (internal/perms), so that a
// call the code makes cannot go undeclared, and so ungranted by deploy/.
var seen struct {
	mu sync.Mutex
	m  map[string]bool
}

// Saw records that a fake served a request that needs perm, an IAM action
// ("ecr:BatchDeleteImage") or a GCP permission ("compute.disks.get"); ""
// (a request that needs none) records nothing. Each fake maps its operation
// names to permissions itself: it knows its service.
func Saw(perm string) {
	if perm == "" {
		return
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.m == nil {
		seen.m = map[string]bool{}
	}
	seen.m[perm] = true
}

// Seen are the permissions recorded by Saw in this process, sorted.
func Seen() []string {
	seen.mu.Lock()
	defer seen.mu.Unlock()
	return slices.Sorted(maps.Keys(seen.m))
}
