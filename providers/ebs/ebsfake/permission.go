package ebsfake

// Permission is the IAM action a request of op needs: what
// providers/fakeapi.Saw records, for the test that every call the code makes
// is declared. An op the fake does not know still maps to an action, so an
// unfaked call shows up as undeclared rather than not at all.
func Permission(op string) string {
	switch op {
	case "":
		return ""
	case OpListServiceQuotas:
		return "servicequotas:" + op
	}
	return "ec2:" + op
}
