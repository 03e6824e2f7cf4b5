package inventory

import (
	"slices"
	"strings"
)

// Subnet is an EC2 subnet in scope.
type Subnet struct {
	Account string
	Region  string
	ID      string
	VPC     string
	AZ      string
	CIDR    string
	Name    string // the Name tag, if any
	// Clusters are the clusters its kubernetes.io/cluster/NAME tags name
	// (shared or owned): cloud evidence that they may use it.
	Clusters []string
	// Usable is 2^(32-prefix) - 5: AWS reserves five addresses in every subnet.
	Usable int
	// Available is AvailableIpAddressCount: the addresses nothing holds.
	Available int
}

// SubnetClusterTagPrefix is the subnet tag EKS and its load balancer
// controller read: kubernetes.io/cluster/NAME = shared | owned.
const SubnetClusterTagPrefix = "kubernetes.io/cluster/"

// InterfaceClusterTag is the tag the VPC CNI puts on the interfaces it
// makes: the cluster's name.
const InterfaceClusterTag = "cluster.k8s.amazonaws.com/name"

// ClusterTags are the tags whose value names the cluster a resource was made
// for, as the managed controllers write them: the VPC CNI's, EKS's on what
// it manages (managed node groups, auto mode), Karpenter's.
var ClusterTags = []string{InterfaceClusterTag, "eks:cluster-name", "aws:eks:cluster-name", "eks:eks-cluster-name"}

// ClustersTagged are the clusters a resource's tags name: each
// kubernetes.io/cluster/NAME key (owned or shared: the VPC resource
// controller's branch interfaces, EKS's and the EBS CSI driver's resources)
// and each ClusterTags value; sorted, once each. Every one is evidence that
// the cluster may use the resource.
func ClustersTagged(tags map[string]string) []string {
	var out []string
	for k, v := range tags {
		if name, ok := strings.CutPrefix(k, SubnetClusterTagPrefix); ok && name != "" {
			out = append(out, name)
		} else if v != "" && slices.Contains(ClusterTags, k) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// NetInterface is an EC2 network interface as reclaim needs it.
type NetInterface struct {
	ID          string
	Subnet      string
	VPC         string
	AZ          string
	Description string
	// Status: available, associated, attaching, in-use, detaching.
	Status string
	// Type is InterfaceType: interface, branch, trunk, efa, ...
	Type             string
	RequesterManaged bool
	RequesterID      string
	// OperatorManaged is Operator.Managed: a service provider manages it.
	OperatorManaged   bool
	OperatorPrincipal string
	Tags              map[string]string
	// IPs are the private IPv4 addresses, the primary first.
	IPs []string
	// Prefixes counts delegated IPv4 prefixes (/28, 16 addresses each).
	Prefixes int
	// Instance is the attached instance's id, "" when detached.
	Instance string
}

// NetworkListing is one account and region's subnets in scope and every
// network interface in them.
type NetworkListing struct {
	Account string
	Region  string
	Subnets []Subnet
	// Interfaces are those of Subnets, listed with managed resources included.
	Interfaces []NetInterface
	// Complete is false when a page failed: then an interface missing from
	// Interfaces is unknown, never gone, and attribution is partial.
	Complete bool
	Problem  string
}
