package gcefake

import "strings"

// Permission is the GCP permission a request of method (a compute method
// id) needs: what providers/fakeapi.Saw records, for the test that every call
// the code makes is declared. Regional disks have no permissions of their
// own (regionDisks.* is authorized with compute.disks.*), aggregatedList
// needs list, and waiting on an operation needs the same permission as
// getting it. An unrouted request maps to "compute.unknown", which nothing
// declares.
func Permission(method string) string {
	resource, verb, _ := strings.Cut(method, ".")
	switch {
	case resource == "regionDisks":
		resource = "disks"
	case verb == "aggregatedList":
		verb = "list"
	case strings.HasSuffix(resource, "Operations") && verb == "wait":
		verb = "get"
	}
	if verb == "" {
		return "compute." + resource
	}
	return "compute." + resource + "." + verb
}
