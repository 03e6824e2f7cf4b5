// Package optout is reclaim's one opt-out rule, the same for every kind: a
// resource whose labels or tags carry the opt-out key is never deleted,
// whatever the key's value. "true", "", "false" and "no" all protect: a
// person who wrote the key meant something by it, and a tool with delete
// rights does not guess that they meant "delete it". To lift the
// protection, remove the key.
//
// It is applied twice: by each kind when it proposes (a protected resource
// is proposed as kept), and by the engine at the re-read right before a
// delete. It is a package of its own so that the readers that drop labels
// early (the cluster collector, the registry lister) apply the same rule
// when they record that a resource is protected.
package optout

// Protects says whether labels carry key, and its value. An empty key is no
// opt-out (the config turned it off): nothing is protected by it.
func Protects(key string, labels map[string]string) (value string, ok bool) {
	if key == "" {
		return "", false
	}
	value, ok = labels[key]
	return value, ok
}

// Reason is why a protected resource is kept, for reports: what carries the
// key ("label", "tag", "repository tag") and the key with its value.
func Reason(what, key, value string) string {
	return "protected by " + what + " " + key + "=" + value
}

// Rule says the rule in a sentence, for a report's "how to opt out" line.
func Rule(what, key, on string) string {
	return "set the " + what + " " + key + " (any value) on the " + on
}
