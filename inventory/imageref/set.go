package imageref

import (
	"sort"

	"reclaim.dev/reclaim/inventory"
)

// Set deduplicates image references: one use per distinct ImageRef, Where
// the lexicographically smallest user seen (so the result does not depend on
// list order), Users counted. It holds only references, never the objects
// they came from. The zero Set is not usable; call NewSet. A Set is not safe
// for concurrent use.
type Set struct {
	m map[inventory.ImageRef]*entry
	// parsed caches what each distinct string parsed to: a fleet runs a few
	// thousand images in a hundred thousand containers.
	parsed map[parseKey]parseResult
}

type parseKey struct {
	s  string
	id bool
}

type parseResult struct {
	ref     inventory.ImageRef
	keep    bool   // an ECR reference (exact or loose)
	problem string // set for a loose one
}

type entry struct {
	where   string
	problem string // the Loose problem that goes with where
	users   int
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{m: map[inventory.ImageRef]*entry{}, parsed: map[parseKey]parseResult{}}
}

// Put records one user of ref; problem is set for a Loose reference.
func (s *Set) Put(ref inventory.ImageRef, where, problem string) {
	s.put(ref, where, problem, 1)
}

func (s *Set) put(ref inventory.ImageRef, where, problem string, users int) {
	e := s.m[ref]
	if e == nil {
		s.m[ref] = &entry{where: where, problem: problem, users: users}
		return
	}
	e.users += users
	if where < e.where {
		e.where, e.problem = where, problem
	}
}

// Image records a container image reference used at where. References to
// other registries are ignored; an ECR reference that does not parse is kept
// as a Loose use (with its Problem), never dropped.
func (s *Set) Image(image, where string) {
	s.add(image, false, where)
}

// ImageID records a container status imageID (see ParseImageID).
func (s *Set) ImageID(id, where string) {
	s.add(id, true, where)
}

func (s *Set) add(image string, id bool, where string) {
	if image == "" {
		return
	}
	k := parseKey{image, id}
	r, cached := s.parsed[k]
	if !cached {
		var (
			ref inventory.ImageRef
			ok  bool
			err error
		)
		if id {
			ref, ok, err = ParseImageID(image)
		} else {
			ref, ok, err = Parse(image)
		}
		switch {
		case err != nil:
			if u, isECR := Loose(image); isECR {
				r = parseResult{ref: u.Ref, keep: true, problem: u.Problem}
			}
		case ok:
			r = parseResult{ref: ref, keep: true}
		}
		s.parsed[k] = r
	}
	if r.keep {
		s.Put(r.ref, where, r.problem)
	}
}

// Merge adds every use of o to s.
func (s *Set) Merge(o *Set) {
	for ref, e := range o.m {
		s.put(ref, e.where, e.problem, e.users)
	}
}

// Reset empties the set.
func (s *Set) Reset() { clear(s.m) }

// Len is the number of distinct references.
func (s *Set) Len() int { return len(s.m) }

// Uses returns the distinct references, sorted (see Sort).
func (s *Set) Uses() []inventory.ImageUse {
	out := make([]inventory.ImageUse, 0, len(s.m))
	for ref, e := range s.m {
		out = append(out, inventory.ImageUse{Ref: ref, Where: e.where, Users: e.users, Problem: e.problem})
	}
	Sort(out)
	return out
}

// Sort orders uses by account, region, repository, tag and digest.
func Sort(u []inventory.ImageUse) {
	sort.Slice(u, func(i, j int) bool {
		a, b := u[i].Ref, u[j].Ref
		switch {
		case a.Repo.Account != b.Repo.Account:
			return a.Repo.Account < b.Repo.Account
		case a.Repo.Region != b.Repo.Region:
			return a.Repo.Region < b.Repo.Region
		case a.Repo.Name != b.Repo.Name:
			return a.Repo.Name < b.Repo.Name
		case a.Tag != b.Tag:
			return a.Tag < b.Tag
		}
		return a.Digest < b.Digest
	})
}
