//go:build !linux

package app

// evictPages is a no-op where the page cache cannot be asked (see the Linux one).
func evictPages(string) {}
