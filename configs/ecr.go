package config

import (
	"net/url"
	"regexp"

	"reclaim.dev/reclaim/base/glob"
)

var (
	awsAccount  = regexp.MustCompile(`^[0-9]{12}$`)
	awsRegion   = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$`)
	roleARN     = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$`)
	accountHint = "an AWS account id is 12 digits, quoted so YAML keeps leading zeros: \"123456789012\""
)

// validateAWSTarget checks an account and region to reach, and the role
// assumed there (ecr.registries[], ec2Interfaces.networks[]).
func validateAWSTarget(ps *problems, p string, t AWSTarget) {
	account, region, role, externalID := t.Account, t.Region, t.RoleARN, t.ExternalID
	if !awsAccount.MatchString(account) {
		ps.add(p+".account", "%q is not an AWS account id — %s", account, accountHint)
	}
	if !awsRegion.MatchString(region) {
		ps.add(p+".region", "%q is not an AWS region — regions look like us-east-1 or eu-central-1", region)
	}
	if role != "" && !roleARN.MatchString(role) {
		ps.add(p+".roleARN", "%q is not an IAM role ARN — write arn:aws:iam::123456789012:role/NAME", role)
	}
	if externalID != "" && role == "" {
		ps.add(p+".externalID", "only meaningful with roleARN")
	}
}

// validateEndpoint checks an endpoint override of an AWS service.
func validateEndpoint(ps *problems, p, endpoint, service string) {
	if endpoint == "" {
		return
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		ps.add(p, "%q is not an absolute http(s) URL — write e.g. https://%s.example.internal or http://localhost:8080", endpoint, service)
	}
}

// GlobRegexp compiles a repository, tag or path glob (see base/glob).
func GlobRegexp(g string) (*regexp.Regexp, error) { return glob.Compile(g) }
