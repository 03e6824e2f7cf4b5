package config

// AWSTarget is one account and region reclaim reads, and how it is
// reached: Profile is a shared-config profile (empty: the default
// credential chain), RoleARN a role assumed on top of those credentials
// (cross-account access), ExternalID that role's external id. Embedded
// without a name in a section's entry, its keys are the entry's.
type AWSTarget struct {
	Account    string `json:"account"`
	Region     string `json:"region"`
	Profile    string `json:"profile,omitempty"`
	RoleARN    string `json:"roleARN,omitempty"`
	ExternalID string `json:"externalID,omitempty"`
}

// Discovery is the target as fleet discovery searches it for EKS
// clusters (a kind's Register AWS).
func (t AWSTarget) Discovery() EKSDiscovery { return EKSDiscovery{AWSTarget: t} }
