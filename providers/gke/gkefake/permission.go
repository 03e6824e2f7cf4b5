package gkefake

// Permission is the GCP permission a request of op needs: what
// providers/fakeapi.Saw records, for the test that every call the code makes
// is declared. The token endpoint (OpToken) needs none.
func Permission(op string) string {
	switch op {
	case OpListClusters:
		return "container.clusters.list"
	case OpToken, "":
		return ""
	}
	return "container." + op
}
