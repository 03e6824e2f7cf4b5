package ecr

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Pullers of a repository, as its policy (or the registry's) names them:
// an account id, "org:o-…" for every account of an AWS Organization
// (aws:PrincipalOrgID), or Anyone.
const (
	Anyone    = "*"
	OrgPrefix = "org:"
)

// pullActions are what pulling an image takes; a statement that allows
// either lets its principals pull.
var pullActions = []string{"ecr:batchgetimage", "ecr:getdownloadurlforlayer"}

// policyDoc is an IAM policy document: each field may be a string or a list.
type policyDoc struct {
	Statement oneOrMany[statement] `json:"Statement"`
}

type statement struct {
	Effect       string                                  `json:"Effect"`
	Principal    json.RawMessage                         `json:"Principal"`
	NotPrincipal json.RawMessage                         `json:"NotPrincipal"`
	Action       oneOrMany[string]                       `json:"Action"`
	NotAction    oneOrMany[string]                       `json:"NotAction"`
	Condition    map[string]map[string]oneOrMany[string] `json:"Condition"`
}

// consumerServices are the service principals of the consumers reclaim
// reads (Lambda functions, ECS tasks, Batch jobs): without a condition that
// names another account they pull for the registry's own account, as a
// service principal acts for the resource's account (the Lambda console
// adds such a statement for a same-account image function).
var consumerServices = map[string]bool{
	"lambda.amazonaws.com": true, "ecs.amazonaws.com": true, "ecs-tasks.amazonaws.com": true, "batch.amazonaws.com": true,
}

// oneOrMany decodes a JSON value or a list of them.
type oneOrMany[T any] []T

func (o *oneOrMany[T]) UnmarshalJSON(b []byte) error {
	var one T
	if err := json.Unmarshal(b, &one); err == nil {
		*o = []T{one}
		return nil
	}
	var many []T
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*o = many
	return nil
}

// PolicyPullers are who a repository or registry policy of the registry
// account own lets pull images: accounts, organizations, or Anyone; sorted,
// once each. It reads a policy as IAM evaluates it, erring towards more
// pullers: Deny statements never add one (ignoring them can only make
// reclaim hold more); an Allow with NotAction allows pulling unless it
// names the pull actions; an Allow with NotPrincipal allows anyone but
// those; an …IfExists condition does not narrow (it matches when its key
// is absent). A policy that cannot be read is an error: the caller must
// then assume anyone may pull.
func PolicyPullers(text, own string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var doc policyDoc
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("the policy is not an IAM policy document: %v", err)
	}
	var out []string
	for _, st := range doc.Statement {
		if !strings.EqualFold(st.Effect, "Allow") || !allowsPull(st) {
			continue
		}
		ps, err := principals(st, own)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// allowsPull says whether the statement's actions take in pulling: Action
// matches a pull action, or NotAction leaves one out.
func allowsPull(st statement) bool {
	matches := func(patterns []string, action string) bool {
		for _, a := range patterns {
			if ok, _ := path.Match(strings.ToLower(a), action); ok {
				return true
			}
		}
		return false
	}
	for _, p := range pullActions {
		if matches(st.Action, p) || (len(st.NotAction) > 0 && !matches(st.NotAction, p)) {
			return true
		}
	}
	return false
}

// principals are the accounts a statement's principal and conditions
// allow: an account's ARN or id, "*" narrowed by aws:PrincipalOrgID or
// aws:PrincipalAccount / aws:SourceAccount / aws:SourceArn conditions, a
// service principal narrowed the same way; a consumer's service principal
// left unnarrowed is the registry's own account.
func principals(st statement, own string) ([]string, error) {
	var named []string
	wildcard, service := false, false
	var p any
	if err := json.Unmarshal(st.Principal, &p); err != nil && len(st.Principal) > 0 {
		return nil, fmt.Errorf("a statement's Principal cannot be read: %v", err)
	}
	if len(st.NotPrincipal) > 0 {
		p = "*" // anyone but those named
	}
	switch v := p.(type) {
	case string:
		wildcard = v == "*"
	case map[string]any:
		for kind, raw := range v {
			var ids oneOrMany[string]
			b, _ := json.Marshal(raw)
			if err := json.Unmarshal(b, &ids); err != nil {
				return nil, fmt.Errorf("a statement's Principal.%s cannot be read: %v", kind, err)
			}
			for _, id := range ids {
				switch {
				case id == "*":
					wildcard = true
				case strings.EqualFold(kind, "AWS"):
					named = append(named, accountOf(id))
				case strings.EqualFold(kind, "Service") && consumerServices[strings.ToLower(id)]:
					service = true
				default: // another service: whose account, only the conditions say
					wildcard = true
				}
			}
		}
	default:
		wildcard = true // no principal the parser knows: assume anyone
	}
	if !wildcard && !service {
		return named, nil
	}
	var narrowed []string
	for op, kv := range st.Condition {
		op = strings.ToLower(op)
		if strings.HasSuffix(op, "ifexists") ||
			!strings.HasPrefix(op, "stringequals") && !strings.HasPrefix(op, "stringlike") && !strings.HasPrefix(op, "arnequals") && !strings.HasPrefix(op, "arnlike") {
			continue
		}
		for key, vals := range kv {
			for _, val := range vals {
				switch strings.ToLower(key) {
				case "aws:principalorgid":
					narrowed = append(narrowed, OrgPrefix+val)
				case "aws:principalaccount", "aws:sourceaccount":
					narrowed = append(narrowed, val)
				case "aws:sourcearn", "aws:principalarn":
					narrowed = append(narrowed, accountOf(val))
				}
			}
		}
	}
	switch {
	case len(narrowed) > 0:
		return append(named, narrowed...), nil
	case wildcard:
		return append(named, Anyone), nil
	default:
		return append(named, own), nil
	}
}

// accountOf is the account of an ARN (arn:aws:iam::ACCOUNT:root,
// arn:aws:lambda:REGION:ACCOUNT:function:F), or the id itself; Anyone when
// the ARN's account is a wildcard.
func accountOf(id string) string {
	if !strings.HasPrefix(id, "arn:") {
		return id
	}
	parts := strings.SplitN(id, ":", 6)
	if len(parts) < 5 || parts[4] == "" || strings.ContainsAny(parts[4], "*?") {
		return Anyone
	}
	return parts[4]
}
