package batchfake

// Permission is the IAM action a request of op needs ("batch:"+op): what
// providers/fakeapi.Saw records, for the test that every call the code makes
// is declared. An op the fake does not know still maps to its action, so an
// unfaked call shows up as undeclared rather than not at all.
func Permission(op string) string {
	if op == "" {
		return ""
	}
	return "batch:" + op
}
