// Package ec2 lists the subnets reclaim watches and every network interface
// in them, and re-reads and deletes network interfaces, through
// aws-sdk-go-v2. Everything it returns is converted to inventory types at this
// edge; no SDK type leaves the package.
//
// One Client is one account in one region. Every API attempt of a client,
// retries included, first waits on one of the client's token buckets: one for
// the non-mutating calls (Options.RequestsPerSecond; EC2's own bucket for
// them is shared with every node's CNI in the account), one for
// DeleteNetworkInterface (Options.DeletesPerSecond). Throttling answers
// (RequestLimitExceeded, HTTP 503) are absorbed by the SDK's adaptive retry
// mode. A Fleet is the set of clients reclaim is configured with.
package ec2

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"reclaim.dev/reclaim/inventory"
)

// ErrInUse is wrapped by DeleteInterface when EC2 refuses because the
// interface is attached (InvalidNetworkInterface.InUse): the caller skips it.
var ErrInUse = inventory.ErrInUse

// API is the narrow seam to the SDK: exactly the EC2 operations this package
// calls, with the SDK's signatures, so *ec2.Client, a decorator or a test
// double satisfies it (and the SDK's paginators accept it).
type API interface {
	DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeNetworkInterfaces(ctx context.Context, in *ec2.DescribeNetworkInterfacesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error)
	DeleteNetworkInterface(ctx context.Context, in *ec2.DeleteNetworkInterfaceInput, optFns ...func(*ec2.Options)) (*ec2.DeleteNetworkInterfaceOutput, error)
}

var _ API = (*ec2.Client)(nil)

// Provider is what the eks-eni kind uses: every configured account and
// region's listing, and the re-read and delete of network interfaces.
type Provider interface {
	// List lists every account and region, in parallel. It never fails:
	// problems make a listing incomplete (Complete false, Problem set).
	List(ctx context.Context) []inventory.NetworkListing
	// Interfaces re-reads network interfaces by id; those that no longer
	// exist are absent from the result.
	Interfaces(ctx context.Context, account, region string, ids []string) ([]inventory.NetInterface, error)
	// DeleteInterface deletes one network interface. Already gone wraps
	// inventory.ErrNotFound (success to the caller); attached wraps ErrInUse.
	DeleteInterface(ctx context.Context, account, region, id string) error
}

var _ Provider = (*Fleet)(nil)
