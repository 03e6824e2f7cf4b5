package fakeapi

import "sync"

// Injected are a fake's failures a test asks for: queued error answers
// (FailNext, FailPage, FailPageMessage) and lost delete responses
// (LoseDeleteResponses). Embed it in a fake: those methods become the
// fake's, and the fake asks TakeFault of each request and LoseResponse of
// each delete it did. Safe for concurrent use.
type Injected struct {
	mu   sync.Mutex
	q    Queue
	lose int
}

// FailNext makes the next n requests of op ("*": any; n <= 0: every one)
// answer code instead of being handled. Faults queue up.
func (in *Injected) FailNext(op, code string, n int) { in.FailPageMessage(op, 0, code, "", n) }

// FailPage is FailNext for the requests of page number page only (1: the
// request without NextToken; 0: any).
func (in *Injected) FailPage(op string, page int, code string, n int) {
	in.FailPageMessage(op, page, code, "", n)
}

// FailPageMessage is FailPage with a message ("": what the service says for
// the code). The HTTP status is the service's for the code.
func (in *Injected) FailPageMessage(op string, page int, code, message string, n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.q.Add(op, Fault{Code: code, Message: message, Page: page, N: n})
}

// ClearFaults drops every queued fault and lost response.
func (in *Injected) ClearFaults() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.q.Clear()
	in.lose = 0
}

// LoseDeleteResponses makes the next n deletes that succeed answer 500
// InternalError, as if the response were lost on the way: the client
// retries and meets NotFound.
func (in *Injected) LoseDeleteResponses(n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.lose = n
}

// TakeFault is the fault that answers this request of op on page, if any
// (Queue.Take).
func (in *Injected) TakeFault(op string, page int) *Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.q.Take(op, page)
}

// LoseResponse says whether the response of a delete just done is lost,
// and uses one lost response up.
func (in *Injected) LoseResponse() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.lose > 0 {
		in.lose--
		return true
	}
	return false
}
