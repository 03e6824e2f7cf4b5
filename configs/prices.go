package config

import "strings"

// Prices turn what a deletion frees into money: list prices a month, in
// Currency. What the file lists comes first; a disk type it does not list
// takes the built-in price (DefaultDiskPrices).
type Prices struct {
	// Currency names the prices' currency in reports and metrics. Default USD.
	Currency string `json:"currency"`
	// Disks are prices per GB-month by disk type, optionally for one region
	// (a region's price wins over the type's).
	Disks []DiskPrice `json:"disks"`
	// ECRPerGBMonth is ECR's storage price per GB-month. Default 0.10.
	ECRPerGBMonth float64 `json:"ecrPerGBMonth"`
}

// DiskPrice is one disk type's price per GB-month.
type DiskPrice struct {
	Type       string  `json:"type"`
	Region     string  `json:"region,omitempty"`
	PerGBMonth float64 `json:"perGBMonth"`
}

// DefaultDiskPrices are Google Cloud's list prices per GB-month for
// us-central1 (cloud.google.com/compute/disks-image-pricing, as listed in
// January 2025); other regions cost up to about 30% more: list your own
// under prices.disks to match your bill.
var DefaultDiskPrices = []DiskPrice{
	{Type: "pd-standard", PerGBMonth: 0.04},
	{Type: "pd-balanced", PerGBMonth: 0.10},
	{Type: "pd-ssd", PerGBMonth: 0.17},
	{Type: "pd-extreme", PerGBMonth: 0.125},
	{Type: "hyperdisk-balanced", PerGBMonth: 0.08},
	{Type: "hyperdisk-throughput", PerGBMonth: 0.05},
	{Type: "hyperdisk-extreme", PerGBMonth: 0.125},
}

const (
	defaultCurrency = "USD"
	// defaultECRPerGBMonth is ECR's storage price (aws.amazon.com/ecr/pricing,
	// as listed in January 2025).
	defaultECRPerGBMonth = 0.10
)

// DiskGBMonth is the price per GB-month of a disk type in a region: the
// file's price for that region, else the file's for the type, else the
// built-in one; false for a type none of them lists.
func (p Prices) DiskGBMonth(typ, region string) (float64, bool) {
	for _, l := range [][]DiskPrice{p.Disks, DefaultDiskPrices} {
		best, found := 0.0, false
		for _, d := range l {
			switch {
			case d.Type != typ:
			case d.Region == region && region != "":
				return d.PerGBMonth, true
			case d.Region == "" && !found:
				best, found = d.PerGBMonth, true
			}
		}
		if found {
			return best, true
		}
	}
	return 0, false
}

func (c *Config) pricesDefaults() {
	def(c, "prices.currency", &c.Prices.Currency, defaultCurrency)
	def(c, "prices.ecrPerGBMonth", &c.Prices.ECRPerGBMonth, defaultECRPerGBMonth)
}

func (p *Prices) validate(ps *problems, path string) {
	if len(p.Currency) != 3 || strings.ToUpper(p.Currency) != p.Currency {
		ps.add(path+".currency", "%q is not a currency code — use three capital letters, such as USD or EUR", p.Currency)
	}
	if p.ECRPerGBMonth < 0 {
		ps.add(path+".ecrPerGBMonth", "%g is negative", p.ECRPerGBMonth)
	}
	for i, d := range p.Disks {
		at := index(path+".disks", i)
		if d.Type == "" {
			ps.add(at+".type", "is required — a GCE disk type such as pd-balanced")
		}
		if d.PerGBMonth < 0 {
			ps.add(at+".perGBMonth", "%g is negative", d.PerGBMonth)
		}
	}
}
