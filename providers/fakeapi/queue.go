package fakeapi

import (
	"fmt"
	"slices"
)

// Fault is one injected failure: answer Code (and Message, "" for the
// service's own words) instead of handling the request.
type Fault struct {
	Code, Message string
	// Page is the page it hits (1: the request without a token); 0 any.
	Page int
	// N is how many requests it answers; <= 0 every one.
	N int
}

// Queue holds a fake's injected failures by operation ("*": any), in the
// order they were queued. Not safe for concurrent use: the fake's lock
// guards it.
type Queue struct{ faults map[string][]*Fault }

// Add queues f for op.
func (q *Queue) Add(op string, f Fault) {
	if q.faults == nil {
		q.faults = map[string][]*Fault{}
	}
	q.faults[op] = append(q.faults[op], &f)
}

// Clear drops every queued fault.
func (q *Queue) Clear() { clear(q.faults) }

// Take returns the fault that answers this request of op on page, if any,
// and uses one of its answers up.
func (q *Queue) Take(op string, page int) *Fault {
	for _, k := range []string{op, "*"} {
		list := q.faults[k]
		for i, f := range list {
			if f.Page != 0 && f.Page != page {
				continue
			}
			if f.N > 0 {
				if f.N--; f.N == 0 {
					q.faults[k] = slices.Delete(list, i, i+1)
				}
			}
			return f
		}
	}
	return nil
}

// RequestID is an AWS-style request id made from a sequence number.
func RequestID(n uint64) string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(n), uint16(n>>32), n%0x1000, (n>>12)%0x1000, n)
}
