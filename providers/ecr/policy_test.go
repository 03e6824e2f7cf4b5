package ecr

import (
	"slices"
	"testing"
)

func TestPolicyPullers(t *testing.T) {
	const own = "123456789012"
	for _, c := range []struct {
		name, policy string
		want         []string
	}{
		{"no policy", "", nil},
		{"cross-account by root ARN and id", `{"Version":"2012-10-17","Statement":[{"Sid":"pull","Effect":"Allow",
			"Principal":{"AWS":["arn:aws:iam::444455556666:root","777788889999"]},
			"Action":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer","ecr:BatchCheckLayerAvailability"]}]}`,
			[]string{"444455556666", "777788889999"}},
		{"a role ARN, one action as a string", `{"Statement":{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::444455556666:role/nodes"},"Action":"ecr:BatchGetImage"}}`,
			[]string{"444455556666"}},
		{"ecr:* counts", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"Action":"ecr:*"}]}`, []string{"444455556666"}},
		{"push only does not", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"Action":["ecr:PutImage","ecr:InitiateLayerUpload"]}]}`, nil},
		{"deny is ignored", `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"ecr:*"}]}`, nil},
		{"the organization", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":["ecr:BatchGetImage"],
			"Condition":{"StringEquals":{"aws:PrincipalOrgID":["o-a1b2c3d4e5"]}}}]}`, []string{"org:o-a1b2c3d4e5"}},
		{"anyone", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"ecr:BatchGetImage"}]}`, []string{"*"}},
		{"Lambda of another account", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"],
			"Condition":{"StringLike":{"aws:sourceARN":"arn:aws:lambda:us-east-1:444455556666:function:*"}}}]}`, []string{"444455556666"}},
		// The statement the Lambda console adds for a same-account image
		// function: the service acts for the registry's own account.
		{"the Lambda console's statement", `{"Version":"2012-10-17","Statement":[{"Sid":"LambdaECRImageRetrievalPolicy","Effect":"Allow",
			"Principal":{"Service":"lambda.amazonaws.com"},"Action":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"]}]}`, []string{own}},
		{"ECS tasks", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"ecr:BatchGetImage"}]}`, []string{own}},
		{"another service, unnarrowed", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"codebuild.amazonaws.com"},"Action":"ecr:BatchGetImage"}]}`, []string{"*"}},
		// …IfExists matches when the key is absent: it lets anyone through.
		{"StringEqualsIfExists does not narrow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"StringEqualsIfExists":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"}}}]}`, []string{"*"}},
		{"ArnLikeIfExists does not narrow", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"ecr:BatchGetImage",
			"Condition":{"ArnLikeIfExists":{"aws:SourceArn":"arn:aws:lambda:us-east-1:444455556666:function:*"}}}]}`, []string{own}},
		{"NotAction without the pull actions allows pulling", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"NotAction":["ecr:PutImage","ecr:DeleteRepository"]}]}`,
			[]string{"444455556666"}},
		{"NotAction of the pull actions does not", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"NotAction":"ecr:*"}]}`, nil},
		{"NotPrincipal is anyone but those", `{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"444455556666"},"Action":"ecr:BatchGetImage"}]}`, []string{"*"}},
		// A negated condition matches everyone it does not name: an Allow
		// with StringNotEquals on aws:PrincipalOrgID lets every account
		// outside the organization pull. It widens, never narrows.
		{"StringNotEquals on the organization does not narrow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"StringNotEquals":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"}}}]}`, []string{"*"}},
		{"StringNotLike on the organization does not narrow", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"ecr:BatchGetImage",
			"Condition":{"StringNotLike":{"aws:PrincipalOrgID":["o-a1b2c3d4e5","o-f6g7h8i9j0"]}}}]}`, []string{"*"}},
		{"ForAnyValue:StringNotEquals does not narrow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"ForAnyValue:StringNotEquals":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"}}}]}`, []string{"*"}},
		{"ForAllValues:StringNotLike does not narrow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"ForAllValues:StringNotLike":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"}}}]}`, []string{"*"}},
		{"StringNotEquals on the account does not narrow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"StringNotEquals":{"aws:PrincipalAccount":"444455556666"}}}]}`, []string{"*"}},
		{"ArnNotLike on the source does not narrow a service", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"codebuild.amazonaws.com"},"Action":"ecr:BatchGetImage",
			"Condition":{"ArnNotLike":{"aws:SourceArn":"arn:aws:codebuild:us-east-1:444455556666:project/*"}}}]}`, []string{"*"}},
		// Beside a positive condition, a negated one adds nothing.
		{"StringNotEquals beside StringEquals", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ecr:BatchGetImage",
			"Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-a1b2c3d4e5"},"StringNotEquals":{"aws:PrincipalAccount":"444455556666"}}}]}`, []string{"org:o-a1b2c3d4e5"}},
		// Either pull action lets a principal pull: the layers' URLs alone
		// are enough to fetch an image whose manifest is known.
		{"GetDownloadUrlForLayer alone", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::444455556666:root"},"Action":"ecr:GetDownloadUrlForLayer"}]}`,
			[]string{"444455556666"}},
		{"NotAction of BatchGetImage still allows the layers", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"NotAction":"ecr:BatchGetImage"}]}`,
			[]string{"444455556666"}},
		{"a Deny never adds a puller", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"444455556666"},"Action":"ecr:BatchGetImage"},
			{"Effect":"Deny","NotPrincipal":{"AWS":"444455556666"},"NotAction":"ecr:PutImage"}]}`, []string{"444455556666"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := PolicyPullers(c.policy, own)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v %v, want %v", got, err, c.want)
			}
		})
	}
	if _, err := PolicyPullers("{not json", own); err == nil {
		t.Fatal("an unreadable policy is not an error")
	}
}
