package ec2fake

import (
	"encoding/xml"
	"net/url"
	"slices"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Opt-in statuses of a region, as DescribeRegions answers them.
const (
	OptInNotRequired = "opt-in-not-required"
	OptedIn          = "opted-in"
	NotOptedIn       = "not-opted-in"
)

// Region is one region of the account, as DescribeRegions answers it.
type Region struct {
	Name string
	// OptInStatus defaults to opt-in-not-required.
	OptInStatus string
}

// SetRegions sets the account's regions DescribeRegions answers; without
// it, the fake's own region alone.
func (s *Server) SetRegions(regions ...Region) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regions = slices.Clone(regions)
}

type xmlRegion struct {
	RegionName     string `xml:"regionName"`
	RegionEndpoint string `xml:"regionEndpoint"`
	OptInStatus    string `xml:"optInStatus"`
}

type describeRegionsResponse struct {
	XMLName    xml.Name                  `xml:"DescribeRegionsResponse"`
	Xmlns      string                    `xml:"xmlns,attr"`
	RequestID  string                    `xml:"requestId"`
	RegionInfo fakeapi.XMLSet[xmlRegion] `xml:"regionInfo"`
}

// describeRegions answers, like EC2, the regions enabled for the account
// (opt-in not required, or opted in) unless AllRegions=true asks for the
// disabled ones too; RegionName.N narrows them. It is not paginated.
func (s *Server) describeRegions(form url.Values) (any, *fakeapi.QueryError) {
	s.mu.Lock()
	regions := slices.Clone(s.regions)
	s.mu.Unlock()
	if regions == nil {
		regions = []Region{{Name: s.opts.Region}}
	}
	all := form.Get("AllRegions") == "true"
	names := fakeapi.QueryList(form, "RegionName")
	out := &describeRegionsResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, r := range regions {
		st := r.OptInStatus
		if st == "" {
			st = OptInNotRequired
		}
		if (st == NotOptedIn && !all) || (len(names) > 0 && !slices.Contains(names, r.Name)) {
			continue
		}
		out.RegionInfo.Items = append(out.RegionInfo.Items, xmlRegion{RegionName: r.Name, RegionEndpoint: "ec2." + r.Name + ".amazonaws.com", OptInStatus: st})
	}
	return out, nil
}
