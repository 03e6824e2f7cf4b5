// Package ebs lists the EBS volumes of an account and region, re-reads,
// snapshots and deletes them, and reads the account's EBS storage quotas,
// through aws-sdk-go-v2 (EC2 and Service Quotas). Everything it returns is
// converted to this package's types at this edge; no SDK type leaves it.
//
// One Client is one account in one region. Every EC2 attempt of a client,
// retries included, first waits on one of the client's token buckets: one for
// DescribeVolumes (Service.RequestsPerSecond, Burst), one for the mutating
// DeleteVolume and CreateSnapshot (Options.DeletesPerSecond, DeleteBurst).
// Service Quotas calls wait on a bucket of their own. Throttling answers are
// absorbed by the SDK's adaptive retry mode. A Fleet is the set of clients
// reclaim is configured with.
package ebs

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
)

// API is the narrow seam to EC2: exactly the operations this package calls,
// with the SDK's signatures, so *ec2.Client satisfies it (and the SDK's
// paginator accepts it).
type API interface {
	DescribeVolumes(ctx context.Context, in *ec2.DescribeVolumesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeVolumesOutput, error)
	DeleteVolume(ctx context.Context, in *ec2.DeleteVolumeInput, optFns ...func(*ec2.Options)) (*ec2.DeleteVolumeOutput, error)
	CreateSnapshot(ctx context.Context, in *ec2.CreateSnapshotInput, optFns ...func(*ec2.Options)) (*ec2.CreateSnapshotOutput, error)
	DescribeSnapshots(ctx context.Context, in *ec2.DescribeSnapshotsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSnapshotsOutput, error)
	DeleteSnapshot(ctx context.Context, in *ec2.DeleteSnapshotInput, optFns ...func(*ec2.Options)) (*ec2.DeleteSnapshotOutput, error)
	DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
	ListSnapshotsInRecycleBin(ctx context.Context, in *ec2.ListSnapshotsInRecycleBinInput, optFns ...func(*ec2.Options)) (*ec2.ListSnapshotsInRecycleBinOutput, error)
}

// QuotasAPI is the seam to Service Quotas.
type QuotasAPI interface {
	ListServiceQuotas(ctx context.Context, in *servicequotas.ListServiceQuotasInput, optFns ...func(*servicequotas.Options)) (*servicequotas.ListServiceQuotasOutput, error)
}

var (
	_ API       = (*ec2.Client)(nil)
	_ QuotasAPI = (*servicequotas.Client)(nil)
)

// Volume is one EBS volume.
type Volume struct {
	ID, AZ string
	// State is creating, available, in-use, deleting, deleted or error.
	State string
	// Type is gp2, gp3, io1, io2, st1, sc1 or standard.
	Type    string
	SizeGiB int64
	Created time.Time
	Tags    map[string]string
	// Attachments are the instance ids the volume is attached to.
	Attachments []string
	// SnapshotID is the snapshot the volume was made from, if any.
	SnapshotID  string
	MultiAttach bool
}

// Listing is one account and region's volumes. Complete is false when a
// page failed; Problem then says what an operator can do, and the volumes
// seen before are kept.
type Listing struct {
	Account, Region string
	Volumes         []Volume
	Complete        bool
	Problem         string
}

// Quota is one EBS storage quota ("Storage for General Purpose SSD (gp3)
// volumes, in TiB"): how much of a volume type the account may provision in
// the region.
type Quota struct {
	Account, Region string
	// Code and Name are Service Quotas' QuotaCode and QuotaName.
	Code, Name string
	// VolumeType is the type in the name's parentheses ("gp3").
	VolumeType string
	// LimitGiB is the applied value in GiB (TiB × 1024).
	LimitGiB float64
}

// QuotaListing is one account and region's storage quotas, or the Problem
// that kept them unknown.
type QuotaListing struct {
	Account, Region string
	Quotas          []Quota
	Problem         string
}
