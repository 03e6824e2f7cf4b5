package config

import (
	"fmt"
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

// renames are the old and new paths of every renamed key, the global ones
// then the sections' (SectionSpec.Was).
func renames() [][2]string {
	out := append([][2]string(nil), renamedKeys...)
	for _, s := range registered() {
		for _, old := range s.was {
			out = append(out, [2]string{old, s.Key})
		}
	}
	return out
}

// rename moves each old key the tree has to its new path before it is
// decoded, remembering where the file wrote it.
func (d *decoder) rename(tree any) {
	for _, r := range renames() {
		old, now := r[0], r[1]
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
		if _, both := to[nkey]; both {
			d.fail(old, "is the old name of %s, which the file sets too — keep %s alone (move what %s says into it)", now, now, old)
			continue
		}
		to[nkey] = node
		d.renamed[now] = old
		d.warnings = append(d.warnings, fmt.Sprintf("%s is now named %s: rename it in the file (the old name still works, for now)", old, now))
	}
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
