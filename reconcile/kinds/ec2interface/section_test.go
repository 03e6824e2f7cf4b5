package ec2interface_test

// The ec2Interfaces section is the ec2-interface kind's own (config.Register): its
// decoding, defaults and every problem, with the field's full path.

import (
	"reflect"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
)

// base is a valid file the cases below add to.

// ec2Section is a valid ec2Interfaces section; cases replace parts of it.
const ec2Section = `ec2Interfaces:
  networks:
    - account: "123456789012"
      region: us-east-1
      subnets: [subnet-0123456789abcdef0]
`

func TestSectionProblems(t *testing.T) {
	// A subnetTags that does not decode also leaves its network with neither
	// subnets nor subnetTags, which is reported too.
	more := map[string]int{"subnetTags number value": 1, "subnetTags a list": 1}
	configtest.Run(t, []configtest.Case{
		{"subnet id", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnets: [subnet-xyz]}
`, "ec2Interfaces.networks[0].subnets[0]", `"subnet-xyz" is not a subnet id — they look like subnet-0123456789abcdef0`},
		{"subnet id, 9 hex digits", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnets: [subnet-0123456789]}
`, "ec2Interfaces.networks[0].subnets[0]", "is not a subnet id"},
		{"subnet listed twice", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnets: [subnet-12345678, subnet-12345678]}
`, "ec2Interfaces.networks[0].subnets", `"subnet-12345678" is listed twice (ec2Interfaces.networks[0].subnets[0] and ec2Interfaces.networks[0].subnets[1])`},
		{"neither subnets nor subnetTags", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1}
`, "ec2Interfaces.networks[0]", "give subnets (ids) or subnetTags — reclaim never scans every subnet of an account"},
		{"both subnets and subnetTags", `ec2Interfaces:
  networks:
    - account: "123456789012"
      region: us-east-1
      subnets: [subnet-0123456789abcdef0]
      subnetTags: {kubernetes.io/role/internal-elb: "1"}
`, "ec2Interfaces.networks[0]", "set either subnets or subnetTags, not both"},
		{"subnetTags empty key", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnetTags: {"": x}}
`, "ec2Interfaces.networks[0].subnetTags", "a tag key must not be empty"},
		{"subnetTags number value", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnetTags: {kubernetes.io/role/elb: 1}}
`, "ec2Interfaces.networks[0].subnetTags", `tag "kubernetes.io/role/elb": expected a string, got 1 — quote it: "1"`},
		{"subnetTags a list", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnetTags: [a, b]}
`, "ec2Interfaces.networks[0].subnetTags", "expected a mapping of tag keys to values"},
		{"no networks", "ec2Interfaces: {}\n", "ec2Interfaces.networks", "at least one network is required — e.g. {account: \"123456789012\""},
		{"account", `ec2Interfaces:
  networks:
    - {account: "12345", region: us-east-1, subnets: [subnet-0123456789abcdef0]}
`, "ec2Interfaces.networks[0].account", `"12345" is not an AWS account id`},
		{"region", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1a, subnets: [subnet-0123456789abcdef0]}
`, "ec2Interfaces.networks[0].region", "regions look like us-east-1"},
		{"roleARN", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, roleARN: reclaim, subnets: [subnet-0123456789abcdef0]}
`, "ec2Interfaces.networks[0].roleARN", "write arn:aws:iam::123456789012:role/NAME"},
		{"externalID without roleARN", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, externalID: x, subnets: [subnet-0123456789abcdef0]}
`, "ec2Interfaces.networks[0].externalID", "only meaningful with roleARN"},
		{"network listed twice", `ec2Interfaces:
  networks:
    - {account: "123456789012", region: us-east-1, subnets: [subnet-0123456789abcdef0]}
    - {account: "123456789012", region: us-east-1, subnets: [subnet-0123456789abcdef1]}
`, "ec2Interfaces.networks[1]", "listed twice (ec2Interfaces.networks[0] and ec2Interfaces.networks[1]) — put every subnet of an account and region in one entry"},
		{"endpoint", ec2Section + "  endpoint: ec2.example.internal\n", "ec2Interfaces.endpoint", "is not an absolute http(s) URL"},
		{"requestsPerSecond", ec2Section + "  requestsPerSecond: 50\n", "ec2Interfaces.requestsPerSecond", "50 is out of range — use more than 0 and at most 20 (EC2's own refill rate, shared with every node's CNI)"},
		{"requestsPerSecond 0", ec2Section + "  requestsPerSecond: 0\n", "ec2Interfaces.requestsPerSecond", "0 is out of range"},
		{"burst", ec2Section + "  burst: 101\n", "ec2Interfaces.burst", "101 is out of range — use 1 to 100"},
		{"deletesPerSecond", ec2Section + "  deletesPerSecond: 6\n", "ec2Interfaces.deletesPerSecond", "6 is out of range — use more than 0 and at most 5"},
		{"deleteBurst", ec2Section + "  deleteBurst: 0\n", "ec2Interfaces.deleteBurst", "0 is out of range — use 1 to 100"},
		{"maxAttempts", ec2Section + "  maxAttempts: 51\n", "ec2Interfaces.maxAttempts", "51 is out of range — use 1 to 50"},
		{"pageSize", ec2Section + "  pageSize: 4\n", "ec2Interfaces.pageSize", "4 is out of range — use 5 to 1000 (the API's MaxResults)"},
		{"headroomWarning", ec2Section + "  headroomWarning: 0%\n", "ec2Interfaces.headroomWarning", "is out of range — use a share above 0% and at most 100%"},
		{"ownership unknown", ec2Section + "  interfaces: {ownership: [aws-cni]}\n", "ec2Interfaces.interfaces.ownership[0]", `"aws-cni" is not an ownership evidence — use vpc-cni or vpc-resource-controller`},
		{"ownership empty", ec2Section + "  interfaces: {ownership: []}\n", "ec2Interfaces.interfaces.ownership", "is empty, so no interface could ever be proven reclaim's to delete — remove the key for the defaults, or set delete: false"},
		{"interfaces protectTag empty", ec2Section + "  interfaces: {protectTag: \"\"}\n", "ec2Interfaces.interfaces.protectTag", `"" is not a usable EC2 tag key — 1 to 128 characters, not starting with aws: (remove the key for the default)`},
		{"interfaces protectTag aws:", ec2Section + "  interfaces: {protectTag: \"aws:keep\"}\n", "ec2Interfaces.interfaces.protectTag", "not starting with aws:"},
		{"interfaces grace 0", ec2Section + "  interfaces: {grace: 0s}\n", "ec2Interfaces.interfaces.grace", "must be more than 0 — an interface must be seen detached on more than one run"},
		{"interfaces maxDeletesPerRun", ec2Section + "  interfaces: {maxDeletesPerRun: -1}\n", "ec2Interfaces.interfaces.maxDeletesPerRun", "-1 is negative — use 0 to delete nothing"},
		{"interfaces breakerCandidates", ec2Section + "  interfaces: {breakerCandidates: 0}\n", "ec2Interfaces.interfaces.breakerCandidates", "must be at least 1 — to delete nothing set maxDeletesPerRun: 0"},
		{"interfaces unknown key", ec2Section + "  interfaces: {graze: 1h}\n", "ec2Interfaces.interfaces.graze", `unknown field — did you mean "grace"?`},
		{"clusters awsSubnets", ec2Section + "clusters:\n  - {name: a, awsSubnets: [subnet-123]}\n", "clusters[0].awsSubnets[0]", `"subnet-123" is not a subnet id — they look like subnet-0123456789abcdef0`},
	}, more)
}

func TestSectionLoads(t *testing.T) {
	// Without the section, no subnet or interface work.
	c, err := config.Parse([]byte(configtest.Base), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ec2interface.SectionOf(c) != nil || ec2interface.FromConfig(c, nil) != nil {
		t.Error("absent ec2Interfaces section: present")
	}

	// subnetTags, the short subnet id form, explicit values kept as written.
	c, err = config.Parse([]byte(configtest.Base+`ec2Interfaces:
  networks:
    - account: "123456789012"
      region: us-east-1
      subnetTags: {kubernetes.io/cluster/prod-a: "", kubernetes.io/role/internal-elb: "1"}
    - account: "123456789012"
      region: eu-west-1
      roleARN: arn:aws:iam::123456789012:role/reclaim
      externalID: x
      subnets: [subnet-12345678, subnet-0123456789abcdef0]
  interfaces: {delete: false, ownership: [], maxDeletesPerRun: 0}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := ec2interface.SectionOf(c)
	wantTags := config.Tags{"kubernetes.io/cluster/prod-a": "", "kubernetes.io/role/internal-elb": "1"}
	if !reflect.DeepEqual(e.Networks[0].SubnetTags, wantTags) {
		t.Errorf("subnetTags = %v, want %v", e.Networks[0].SubnetTags, wantTags)
	}
	i := e.Interfaces
	if i.Delete || i.Ownership == nil || len(i.Ownership) != 0 || i.MaxDeletesPerRun != 0 || i.Grace.Std() != 6*time.Hour {
		t.Errorf("interfaces = %+v", i)
	}
	if e.RequestsPerSecond != 5 || e.PageSize != 1000 || e.HeadroomWarning != 0.8 || e.WarnBefore.Std() != 48*time.Hour {
		t.Errorf("defaults = %+v", *e)
	}
	// Fleet discovery searches the section's accounts and regions by default.
	c2, err := config.Parse([]byte(configtest.Base+"fleet: {discover: true}\n"+ec2Section), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Fleet.EKS; len(got) != 1 || got[0].Account != "123456789012" || got[0].Region != "us-east-1" {
		t.Errorf("fleet.eks defaults to %+v, want the ec2 network's account and region", got)
	}
	// The printed configuration shows the tags and loads back the same.
	printed, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(printed), "kubernetes.io/role/internal-elb: \"1\"") {
		t.Errorf("printed subnetTags:\n%s", printed)
	}
	again, err := config.Parse(printed, "printed")
	if err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, printed)
	}
	if !reflect.DeepEqual(ec2interface.SectionOf(again), e) {
		t.Errorf("ec2 printed and loaded back:\ngot  %+v\nwant %+v", *ec2interface.SectionOf(again), *e)
	}
}

// The section was named ec2 before it said its kind's name: a file that
// still says so loads the same section, with a warning naming the new key;
// its problems name the key the file wrote; both names at once is a problem.
func TestSectionOldName(t *testing.T) {
	old := "ec2:" + strings.TrimPrefix(ec2Section, "ec2Interfaces:")
	c, err := config.Parse([]byte(configtest.Base+old), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := config.Parse([]byte(configtest.Base+ec2Section), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s := ec2interface.SectionOf(c); s == nil || !reflect.DeepEqual(*s, *ec2interface.SectionOf(n)) {
		t.Fatalf("the old name's section %+v, want %+v", s, ec2interface.SectionOf(n))
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "ec2 is now named ec2Interfaces") || len(n.Warnings) != 0 {
		t.Fatalf("warnings %q and %q, want one naming ec2Interfaces for the old name only", c.Warnings, n.Warnings)
	}
	configtest.Run(t, []configtest.Case{
		{"old name, bad grace", old + "  interfaces: {grace: 0s}\n", "ec2.interfaces.grace", "must be more than 0"},
		{"both names", old + ec2Section, "ec2", "old name of ec2Interfaces, which the file sets too"},
	}, nil)
}
