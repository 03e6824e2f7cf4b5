package awsclient

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// OpenEC2 opens a client of EC2's API (ec2, ebs), the one way: it loads
// s's SDK config for service (s has its defaults, Service.Check) and makes
// the EC2 client on it, paced by p's buckets (Meter: describes at s's
// rate, the mutating operations at mutates and burst). RequestLimitExceeded
// (HTTP 503) is in retry.DefaultThrottleErrorCodes, which the adaptive
// mode's throttle detection uses: a throttled attempt is retried and slows
// the adaptive token bucket down. It calls nothing (an assumed role's
// credentials are fetched on the first call).
func (p *Paced) OpenEC2(ctx context.Context, s Service, service string, mutates float64, burst int, name string, mutating ...string) (Client, *ec2.Client, error) {
	c, err := s.Load(ctx, service, s.RequestsPerSecond, s.Burst, s.MaxAttempts)
	if err != nil {
		return Client{}, nil, err
	}
	return c, c.EC2(p.Meter(s, mutates, burst, name, mutating...)), nil
}

// EC2 is an EC2 SDK client on c's config, endpoint and retryer, paced
// after the retryer (AfterRetry) by pace's describe and mutate buckets
// instead of c's one bucket: EC2 and EBS share the account's EC2 API
// rate limits, which bucket describes apart from deletes.
func (c Client) EC2(pace *Metered) *ec2.Client {
	return ec2.NewFromConfig(c.Config, func(eo *ec2.Options) {
		c.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, AfterRetry(pace))
	})
}
