package perms

import (
	"slices"
	"testing"
)

func TestUnionSortsAndDropsDuplicates(t *testing.T) {
	a := Set{Read: Grants{IAM: []string{"ecr:DescribeImages", "ec2:DescribeSubnets"},
		RBAC: []Rule{{Resource: "pods", Verbs: []string{"list"}}}}}
	b := Set{Read: Grants{IAM: []string{"ec2:DescribeSubnets"}, RBAC: []Rule{{Resource: "pods", Verbs: []string{"list"}}}},
		Delete:  Grants{RBAC: []Rule{{Group: "batch", Resource: "jobs", Verbs: []string{"get", "delete"}}}},
		Outside: []string{"sts:AssumeRole"}}
	u := Union(a, b)
	if want := []string{"ec2:DescribeSubnets", "ecr:DescribeImages"}; !slices.Equal(u.Read.IAM, want) {
		t.Errorf("Read.IAM = %v, want %v", u.Read.IAM, want)
	}
	if want := []string{"list pods"}; !slices.Equal(u.Read.RBACLines(), want) {
		t.Errorf("Read.RBACLines() = %v, want %v", u.Read.RBACLines(), want)
	}
	if want := []string{"delete jobs.batch", "get jobs.batch", "list pods"}; !slices.Equal(u.All().RBACLines(), want) {
		t.Errorf("All().RBACLines() = %v, want %v", u.All().RBACLines(), want)
	}
	if !slices.Equal(u.Outside, []string{"sts:AssumeRole"}) {
		t.Errorf("Outside = %v", u.Outside)
	}
}

func TestDiffNamesMissingAndExtra(t *testing.T) {
	missing, extra := Diff([]string{"a", "b"}, []string{"b", "c", "c"})
	if !slices.Equal(missing, []string{"a"}) || !slices.Equal(extra, []string{"c"}) {
		t.Fatalf("Diff = %v, %v; want [a], [c]", missing, extra)
	}
}
