package inventory

import "sync"

// OwnerLabels hands out one {Key: owner} label map per owner, shared by
// every object of that owner: what a listing keeps of a label that names
// owners (notify.ownerLabel), 100,000 objects costing a pointer each. Safe
// for concurrent use.
type OwnerLabels struct {
	Key string
	mu  sync.Mutex
	m   map[string]map[string]string
}

// Of returns the shared map of owner v.
func (o *OwnerLabels) Of(v string) map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	m, ok := o.m[v]
	if !ok {
		m = map[string]string{o.Key: v}
		if o.m == nil {
			o.m = map[string]map[string]string{}
		}
		o.m[v] = m
	}
	return m
}
