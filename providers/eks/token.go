package eks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/oauth2"
)

// Token format, as aws-iam-authenticator defines it.
const (
	TokenPrefix = "k8s-aws-v1."
	// ClusterHeader names the cluster inside the signature, so that a
	// token for one cluster is refused by every other.
	ClusterHeader = "x-k8s-aws-id"
	// TokenLifetime is how long EKS accepts a token after it was signed;
	// presignExpires is what the URL itself says (the authenticator
	// allows 15 minutes whatever it says, and wants it at most 60 s).
	TokenLifetime  = 15 * time.Minute
	presignExpires = "60"
	// refreshBefore: a token is replaced this long before it expires.
	refreshBefore = time.Minute
)

// TokenSource returns the source of bearer tokens for one cluster: each a
// presigned STS GetCallerIdentity naming the cluster, replaced a minute
// before EKS would refuse it. Tokens never appear in errors.
func (c *Client) TokenSource(cluster string) oauth2.TokenSource {
	return oauth2.ReuseTokenSource(nil, &tokenSource{c: c, cluster: cluster, now: time.Now})
}

type tokenSource struct {
	c       *Client
	cluster string
	now     func() time.Time
}

func (t *tokenSource) Token() (*oauth2.Token, error) {
	if t.c.presign == nil {
		return nil, errors.New("eks: this client mints no tokens (made with NewWithAPI)")
	}
	signed := t.now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := t.c.presign.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(so *sts.Options) {
			so.APIOptions = append(so.APIOptions,
				smithyhttp.SetHeaderValue(ClusterHeader, t.cluster),
				smithyhttp.SetHeaderValue("X-Amz-Expires", presignExpires))
		})
	})
	if err != nil {
		// The SDK's error names the credential chain's problem, not a token.
		return nil, fmt.Errorf("eks %s/%s: token for cluster %s: %w", t.c.account, t.c.region, t.cluster, err)
	}
	return &oauth2.Token{
		AccessToken: TokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)),
		TokenType:   "Bearer",
		Expiry:      signed.Add(TokenLifetime - refreshBefore),
	}, nil
}
