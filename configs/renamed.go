package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A key an earlier version named otherwise keeps working: the file's old
// key is read as the new one, with a warning that names the new key
// (Config.Warnings), and problems inside it name the key the file wrote.
// Both keys at once is a problem.

// renamedKeys are the global keys' old names: old path, new path.
var renamedKeys = [][2]string{
	{"fleet.snapshots", "fleet.records"},
}

// renaming is one old key and its new path; merge: the old key is a
// mapping whose keys now stand in the new one (SectionSpec.Moved with "").
type renaming struct {
	old, now string
	merge    bool
}

// renames are the old and new paths of every renamed key, the global ones
// then the sections' (SectionSpec.Was, then SectionSpec.Moved).
func renames() []renaming {
	var out []renaming
	for _, r := range renamedKeys {
		out = append(out, renaming{old: r[0], now: r[1]})
	}
	for _, s := range registered() {
		for _, old := range s.was {
			out = append(out, renaming{old: old, now: s.Key})
		}
	}
	for _, s := range registered() {
		for _, m := range s.moved {
			r := renaming{old: m[0], now: s.Key, merge: m[1] == ""}
			if !r.merge {
				r.now = join(s.Key, m[1])
			}
			out = append(out, r)
		}
	}
	return out
}

// rename moves each old key the tree has to its new path before it is
// decoded, remembering where the file wrote it.
func (d *decoder) rename(tree any) {
	for _, r := range renames() {
		old, now := r.old, r.now
		from, okey := mappingAt(tree, keysOf(old), false)
		node, ok := from[okey]
		if !ok {
			continue
		}
		to, nkey := mappingAt(tree, keysOf(now), true)
		if to == nil {
			continue // the new key's parent is not a mapping: decoding says so
		}
		delete(from, okey)
		if r.merge {
			d.merge(old, now, node, to, nkey)
			continue
		}
		if _, both := to[nkey]; both {
			d.fail(old, "is the old name of %s, which the file sets too — keep %s alone (move what %s says into it)", now, now, old)
			continue
		}
		to[nkey] = node
		d.renamed[now] = old
		d.warnings = append(d.warnings, fmt.Sprintf("%s is now named %s: rename it in the file (the old name still works, for now)", old, now))
	}
}

// merge moves the keys of the old mapping node into the section at
// to[key] (SectionSpec.Moved with ""), each remembered where the file
// wrote it; a key written in both places is a problem.
func (d *decoder) merge(old, now string, node any, to map[string]any, key string) {
	inner, ok := node.(map[string]any)
	if node != nil && !ok {
		d.fail(old, "expected a mapping of keys to values, got %s", describe(node))
		return
	}
	sec, _ := to[key].(map[string]any)
	if sec == nil {
		sec = map[string]any{}
		to[key] = sec
	}
	for _, k := range slices.Sorted(maps.Keys(inner)) {
		if _, both := sec[k]; both {
			d.fail(join(old, k), "is the old place of %s, which the file sets too — keep %s alone (move what %s says into it)", join(now, k), join(now, k), join(old, k))
			continue
		}
		sec[k] = inner[k]
		d.renamed[join(now, k)] = join(old, k)
	}
	d.warnings = append(d.warnings, fmt.Sprintf("%s's keys now stand in %s: move them there in the file (the old place still works, for now)", old, now))
}

// keysOf splits a dotted path into its keys.
func keysOf(path string) []string {
	return strings.Split(path, ".")
}

// mappingAt walks keys[:len-1] from tree's root and returns that mapping
// and the last key; with create it makes the mappings that are missing.
func mappingAt(tree any, keys []string, create bool) (map[string]any, string) {
	m, ok := tree.(map[string]any)
	if !ok {
		return nil, ""
	}
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if !create || m[k] != nil {
				return nil, ""
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return m, keys[len(keys)-1]
}

// where is the path the file wrote a key at: an unnested key's old
// place, or the old name of a renamed key it is in.
func (ps *problems) where(path string) string {
	if w, ok := ps.written[path]; ok {
		return w
	}
	for now, old := range ps.renamed {
		if under(path, now) {
			return old + path[len(now):]
		}
	}
	return path
}
