package awsclient

import "github.com/aws/aws-sdk-go-v2/service/ec2"

// EC2 is an EC2 SDK client on c's config, endpoint and retryer, paced
// after the retryer (AfterRetry) by pace's describe and mutate buckets
// instead of c's one bucket: EC2 and EBS share the account's EC2 API
// rate limits, which bucket describes apart from deletes.
func (c Client) EC2(pace *Metered) *ec2.Client {
	return ec2.NewFromConfig(c.Config, func(eo *ec2.Options) {
		c.Into(&eo.BaseEndpoint, &eo.Retryer, &eo.APIOptions, AfterRetry(pace))
	})
}
