package bucket

import (
	"errors"
	"fmt"
)

// MaxListed is the most objects a listing reads: a hundred times the
// 1,000 clusters' records the deleter is measured reading
// (BenchmarkRecordFleet), one record a cluster. A records prefix never
// holds more; a listing that goes on past it, at the page size asked for,
// is an endpoint that does not end its listing.
const MaxListed = 100_000

// ErrEndlessListing is what a listing that does not end wraps: a page
// token given again, a page that says more follow and gives no token, or
// more pages than MaxListed objects fill. The listing is refused, never
// shortened.
var ErrEndlessListing = errors.New("the listing does not end")

// pages checks a listing's pages as they come: each next-page token is one
// not given before, and the pages are no more than MaxListed objects fill
// at size a page.
type pages struct {
	size int
	n    int
	seen map[string]int // token: the page that gave it
}

func newPages(size int) *pages {
	if size <= 0 {
		size = 1000
	}
	return &pages{size: size, seen: map[string]int{}}
}

// most is how many pages a listing may take.
func (p *pages) most() int { return (MaxListed + p.size - 1) / p.size }

// next is called after each page with the token it gave (more: it says
// more pages follow); nil when the listing may go on to that token.
func (p *pages) next(token string, more bool) error {
	p.n++
	switch {
	case !more:
		return nil
	case token == "":
		return fmt.Errorf("%w: page %d says more follow but gives no token to read them", ErrEndlessListing, p.n)
	case p.seen[token] != 0:
		return fmt.Errorf("%w: page %d gave the page token page %d gave: the endpoint repeats its pages (is it a server that ignores the token?)", ErrEndlessListing, p.n, p.seen[token])
	case p.n >= p.most():
		return fmt.Errorf("%w: %d pages of up to %d objects and more to come, more than the %d objects a records prefix holds", ErrEndlessListing, p.n, p.size, MaxListed)
	}
	p.seen[token] = p.n
	return nil
}
