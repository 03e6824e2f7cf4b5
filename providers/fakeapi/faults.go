package fakeapi

import "sync"

// Faults are the failures a fake injects: every call denied, the next n
// calls throttled, the next n calls of one operation failing. Embed it; the
// fake asks Take on every call. Safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	throttle int
	denied   bool
	fail     map[string]int
}

// ThrottleNext makes the next n calls answer the service's throttling error.
func (f *Faults) ThrottleNext(n int) { f.mu.Lock(); f.throttle = n; f.mu.Unlock() }

// Deny makes every call answer the service's access-denied error, or stops it.
func (f *Faults) Deny(on bool) { f.mu.Lock(); f.denied = on; f.mu.Unlock() }

// FailNext makes the next n calls of op answer a server error (500).
func (f *Faults) FailNext(op string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]int{}
	}
	f.fail[op] = n
}

// Take says which fault answers this call of op, denial first, and uses it up.
func (f *Faults) Take(op string) (denied, throttled, failed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.denied {
		return true, false, false
	}
	if f.throttle > 0 {
		f.throttle--
		return false, true, false
	}
	if f.fail[op] > 0 {
		f.fail[op]--
		return false, false, true
	}
	return false, false, false
}
