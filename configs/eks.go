package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Tags are AWS tags, key to value. The decoder handles no maps, so Tags
// decodes and prints itself.
type Tags map[string]string

// UnmarshalJSON accepts a mapping of tag keys to string values.
func (t *Tags) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("expected a mapping of tag keys to values, such as {kubernetes.io/role/internal-elb: \"1\"}")
	}
	m := make(Tags, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("tag %q: expected a string, got %s — quote it: %q", k, v, strings.Trim(string(v), `"`))
		}
		m[k] = s
	}
	*t = m
	return nil
}

// MarshalJSON prints the tags as a mapping.
func (t Tags) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]string(t)) }

var subnetID = regexp.MustCompile(`^subnet-[0-9a-f]{8}([0-9a-f]{9})?$`)

func checkSubnet(s string) string {
	if !subnetID.MatchString(s) {
		return fmt.Sprintf("%q is not a subnet id — they look like subnet-0123456789abcdef0", s)
	}
	return ""
}

// ParseRetention reads a retention annotation's value: a duration such as
// 90m, 36h or 7d, or "never". ok is false for anything else.
func ParseRetention(s string) (d time.Duration, never bool, ok bool) {
	s = strings.TrimSpace(s)
	if s == "never" {
		return 0, true, true
	}
	v, err := ParseDuration(s)
	if err != nil {
		return 0, false, false
	}
	return v.Std(), false, true
}

// crossValidateEC2 checks the clusters' awsSubnets: they feed the
// ec2-interface, k8s-job and k8s-pod kinds (sections ec2Interfaces, jobs, pods).
func (c *Config) crossValidateEC2(ps *problems) {
	// Checked with or without an ec2Interfaces section: a bad id is never accepted silently.
	for i, cl := range c.Clusters {
		validateList(ps, index("clusters", i)+".awsSubnets", cl.AWSSubnets, checkSubnet)
	}
	if !c.Has("ec2Interfaces") { // the ec2-interface kind's section
		for i, cl := range c.Clusters {
			if len(cl.AWSSubnets) > 0 && !c.Has("jobs") && !c.Has("pods") {
				ps.add(index("clusters", i)+".awsSubnets", "only meaningful with an ec2Interfaces section")
			}
		}
	}
}
