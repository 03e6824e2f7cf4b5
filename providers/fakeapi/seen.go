package fakeapi

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
)

// seen are the permissions the requests fakes served in this process needed:
// tests compare them with what reclaim declares (base/perms), so that a
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

// CheckSeen is for a TestMain, after m.Run: it writes to w each permission
// Seen that declared (what reclaim declares, app.Permissions) lacks, and returns
// the exit code, 1 if there is one: a call the code made that deploy/ may
// not grant.
func CheckSeen(w io.Writer, declared []string) int {
	code := 0
	for _, perm := range Seen() {
		if !slices.Contains(declared, perm) {
			fmt.Fprintf(w, "FAIL: a test made a call that needs %s, which no kind or read declares (their permissions.go)\n", perm)
			code = 1
		}
	}
	return code
}
