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
	Effect    string                                  `json:"Effect"`
	Principal json.RawMessage                         `json:"Principal"`
	Action    oneOrMany[string]                       `json:"Action"`
	Condition map[string]map[string]oneOrMany[string] `json:"Condition"`
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

// PolicyPullers are who a repository or registry policy lets pull images:
// accounts, organizations, or Anyone; sorted, once each. Deny statements
// are ignored (they only narrow who may pull, and ignoring them can only
// make reclaim hold more). A policy that cannot be read is an error: the
// caller must then assume anyone may pull.
func PolicyPullers(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var doc policyDoc
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("the policy is not an IAM policy document: %v", err)
	}
	var out []string
	for _, st := range doc.Statement {
		if !strings.EqualFold(st.Effect, "Allow") || !allowsPull(st.Action) {
			continue
		}
		ps, err := principals(st)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func allowsPull(actions []string) bool {
	for _, a := range actions {
		a = strings.ToLower(a)
		for _, p := range pullActions {
			if ok, _ := path.Match(a, p); ok {
				return true
			}
		}
	}
	return false
}

// principals are the accounts a statement's principal and conditions
// allow: an account's ARN or id, "*" narrowed by aws:PrincipalOrgID or
// aws:PrincipalAccount / aws:SourceAccount / aws:SourceArn conditions, a
// service principal narrowed the same way.
func principals(st statement) ([]string, error) {
	var named []string
	wildcard := false
	var p any
	if err := json.Unmarshal(st.Principal, &p); err != nil && len(st.Principal) > 0 {
		return nil, fmt.Errorf("a statement's Principal cannot be read: %v", err)
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
				default: // a service (lambda.amazonaws.com): its account is in the conditions
					wildcard = true
				}
			}
		}
	default:
		wildcard = true // no principal the parser knows: assume anyone
	}
	if !wildcard {
		return named, nil
	}
	var narrowed []string
	for op, kv := range st.Condition {
		if !strings.HasPrefix(strings.ToLower(op), "stringequals") && !strings.HasPrefix(strings.ToLower(op), "stringlike") && !strings.HasPrefix(strings.ToLower(op), "arnequals") && !strings.HasPrefix(strings.ToLower(op), "arnlike") {
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
	if len(narrowed) == 0 {
		return append(named, Anyone), nil
	}
	return append(named, narrowed...), nil
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
