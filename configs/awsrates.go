package config

// AWSRates is how a kind calls an AWS API, embedded without a name in its
// section (its keys stand in the section): reclaim's own limit on its
// reads (RequestsPerSecond, Burst) and on its deletes (DeletesPerSecond,
// DeleteBurst) per account and region, the SDK's attempts a call, and the
// page size of its listings.
type AWSRates struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
	DeletesPerSecond  float64 `json:"deletesPerSecond"`
	DeleteBurst       int     `json:"deleteBurst"`
	MaxAttempts       int     `json:"maxAttempts"`
	PageSize          int     `json:"pageSize"`
}

// EC2Rates are the default rates of a section whose kind calls EC2 (ec2,
// ebs), with its page size: reclaim's own share of each account and
// region's EC2 buckets, which the account's other callers share.
func EC2Rates(pageSize int) AWSRates {
	return AWSRates{RequestsPerSecond: 5, Burst: 10, DeletesPerSecond: 1, DeleteBurst: 5, MaxAttempts: 10, PageSize: pageSize}
}

// AWSRatesRules are a kind's defaults of its AWSRates and its API's limits.
type AWSRatesRules struct {
	Defaults         AWSRates
	MinPage, MaxPage int
	// ReadsWhy, BurstWhy, DeletesWhy and PageWhy finish the messages of a
	// value out of range: whose limit it is ("(EC2's bucket)").
	ReadsWhy, BurstWhy, DeletesWhy, PageWhy string
}

// FillAWSRates sets what the file left out to the kind's defaults.
func FillAWSRates(set func(string) bool, r *AWSRates, rules *AWSRatesRules) {
	d := rules.Defaults
	Fill(set, "requestsPerSecond", &r.RequestsPerSecond, d.RequestsPerSecond)
	Fill(set, "burst", &r.Burst, d.Burst)
	Fill(set, "deletesPerSecond", &r.DeletesPerSecond, d.DeletesPerSecond)
	Fill(set, "deleteBurst", &r.DeleteBurst, d.DeleteBurst)
	Fill(set, "maxAttempts", &r.MaxAttempts, d.MaxAttempts)
	Fill(set, "pageSize", &r.PageSize, d.PageSize)
}

// CheckAWSRates reports what is out of the API's range.
func CheckAWSRates(report *Report, r *AWSRates, rules *AWSRatesRules) {
	why := func(s string) string {
		if s == "" {
			return ""
		}
		return " " + s
	}
	if r.RequestsPerSecond <= 0 || r.RequestsPerSecond > 20 {
		report.Add("requestsPerSecond", "%g is out of range — use more than 0 and at most 20%s", r.RequestsPerSecond, why(rules.ReadsWhy))
	}
	if r.Burst < 1 || r.Burst > 100 {
		report.Add("burst", "%d is out of range — use 1 to 100%s", r.Burst, why(rules.BurstWhy))
	}
	if r.DeletesPerSecond <= 0 || r.DeletesPerSecond > 5 {
		report.Add("deletesPerSecond", "%g is out of range — use more than 0 and at most 5%s", r.DeletesPerSecond, why(rules.DeletesWhy))
	}
	if r.DeleteBurst < 1 || r.DeleteBurst > 100 {
		report.Add("deleteBurst", "%d is out of range — use 1 to 100", r.DeleteBurst)
	}
	if r.MaxAttempts < 1 || r.MaxAttempts > 50 {
		report.Add("maxAttempts", "%d is out of range — use 1 to 50", r.MaxAttempts)
	}
	if r.PageSize < rules.MinPage || r.PageSize > rules.MaxPage {
		report.Add("pageSize", "%d is out of range — use %d to %d%s", r.PageSize, rules.MinPage, rules.MaxPage, why(rules.PageWhy))
	}
}
