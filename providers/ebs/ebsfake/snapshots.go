package ebsfake

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Page sizes of DescribeSnapshots (MaxResults 5..1000; more returns 1000, as
// EC2's reference says) and DescribeImages (1..1000).
const (
	MaxSnapshotPageSize = 1000
	MaxImagePageSize    = 1000
)

// Image is an AMI to seed (AddImage): its block device mappings name the
// snapshots it was registered from, which DeleteSnapshot then refuses
// with InvalidSnapshot.InUse.
type Image struct {
	ID, Name string
	// State is available (default), pending, failed or disabled; a
	// disabled image is listed only with IncludeDisabled, as EC2 does.
	State     string
	Snapshots []string
}

// AddSnapshot seeds a snapshot of account ("": Options.Account) and
// returns its id; State defaults to completed, StorageTier to standard.
func (s *Server) AddSnapshot(account string, sn Snapshot) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn.Account = s.account(account)
	if sn.ID == "" {
		sn.ID = fmt.Sprintf("snap-%017x", s.seq.Add(1))
	}
	if !strings.HasPrefix(sn.ID, "snap-") {
		panic(fmt.Sprintf("ebsfake.AddSnapshot: id %q: want snap-…", sn.ID))
	}
	sn.State = cmpOr(sn.State, "completed")
	sn.StorageTier = cmpOr(sn.StorageTier, "standard")
	if sn.SizeGiB == 0 {
		sn.SizeGiB = 8
	}
	if sn.Started.IsZero() {
		sn.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	sn.Tags = maps.Clone(sn.Tags)
	s.snapshots = slices.DeleteFunc(s.snapshots, func(o Snapshot) bool { return o.ID == sn.ID })
	s.snapshots = append(s.snapshots, sn)
	return sn.ID
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// HasSnapshot reports whether the snapshot exists, in any account.
func (s *Server) HasSnapshot(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.snapshots, func(o Snapshot) bool { return o.ID == id })
}

// SetSnapshotState sets a snapshot's state (error, to test a failed one).
func (s *Server) SetSnapshotState(id, state string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.snapshots {
		if s.snapshots[i].ID == id {
			s.snapshots[i].State = state
			return true
		}
	}
	return false
}

// AddImage seeds an AMI of account ("": Options.Account) and returns its id.
func (s *Server) AddImage(account string, im Image) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	account = s.account(account)
	if im.ID == "" {
		im.ID = fmt.Sprintf("ami-%017x", s.seq.Add(1))
	}
	im.State = cmpOr(im.State, "available")
	im.Snapshots = slices.Clone(im.Snapshots)
	s.images[account] = append(s.images[account], im)
	return im.ID
}

// DeregisterImage removes an AMI, releasing its snapshots.
func (s *Server) DeregisterImage(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for a, ims := range s.images {
		if i := slices.IndexFunc(ims, func(im Image) bool { return im.ID == id }); i >= 0 {
			s.images[a] = slices.Delete(ims, i, i+1)
			return true
		}
	}
	return false
}

// ---- filters ----

type queryFilter struct {
	name   string
	values []string
}

type queryFilterList []queryFilter

// queryFilters reads Filter.N.Name / Filter.N.Value.M, refusing a name
// outside known (a tag:KEY filter is known when "tag:" is).
func queryFilters(form url.Values, known ...string) (queryFilterList, *fakeapi.QueryError) {
	var out queryFilterList
	for i := 1; ; i++ {
		p := "Filter." + strconv.Itoa(i)
		n, ok := form[p+".Name"]
		if !ok {
			return out, nil
		}
		name := n[0]
		if !slices.Contains(known, name) && !(strings.HasPrefix(name, "tag:") && slices.Contains(known, "tag:")) {
			return nil, errorf(CodeInvalidParameterValue, "The filter '%s' is invalid", name)
		}
		out = append(out, queryFilter{name, fakeapi.QueryList(form, p+".Value")})
	}
}

// match: every filter matches (AND), one of its values (OR); value
// returns the resource's value of a filter, false when it has none.
func (fs queryFilterList) match(value func(name string) (string, bool)) bool {
	for _, f := range fs {
		v, ok := value(f.name)
		if !ok || !slices.Contains(f.values, v) {
			return false
		}
	}
	return true
}

// matchAny: like match, for a filter whose resource has several values
// (an image's snapshots).
func (fs queryFilterList) matchAny(values func(name string) []string) bool {
	for _, f := range fs {
		if !slices.ContainsFunc(values(f.name), func(v string) bool { return slices.Contains(f.values, v) }) {
			return false
		}
	}
	return true
}

func pageSize(form url.Values, lo, hi int) (int, *fakeapi.QueryError) {
	v := form.Get("MaxResults")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo {
		return 0, errorf(CodeInvalidParameterValue, "Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", v, lo, hi)
	}
	return min(n, hi), nil
}

func pageStart(form url.Values) (after string, page int, e *fakeapi.QueryError) {
	tok := form.Get("NextToken")
	if tok == "" {
		return "", 1, nil
	}
	t, ok := fakeapi.ParsePageToken(tok)
	if !ok || t.Query != fakeapi.QueryFingerprint(form) {
		return "", 0, errorf(CodeInvalidNextToken, "The specified NextToken is not valid.")
	}
	return t.After, t.Page, nil
}

func checkSnapshotID(id string) *fakeapi.QueryError {
	if !strings.HasPrefix(id, "snap-") || len(id) < len("snap-")+8 {
		return errorf(CodeSnapshotMalformed, "Invalid id: \"%s\" (expecting \"snap-...\")", id)
	}
	return nil
}

// ---- DescribeSnapshots ----

type describeSnapshotsResponse struct {
	XMLName     xml.Name                    `xml:"DescribeSnapshotsResponse"`
	Xmlns       string                      `xml:"xmlns,attr"`
	RequestID   string                      `xml:"requestId"`
	SnapshotSet fakeapi.XMLSet[xmlSnapshot] `xml:"snapshotSet"`
	NextToken   string                      `xml:"nextToken,omitempty"`
}

type xmlSnapshot struct {
	SnapshotID  string                          `xml:"snapshotId"`
	VolumeID    string                          `xml:"volumeId"`
	Status      string                          `xml:"status"`
	StartTime   string                          `xml:"startTime"`
	Progress    string                          `xml:"progress"`
	OwnerID     string                          `xml:"ownerId"`
	VolumeSize  int64                           `xml:"volumeSize"`
	Description string                          `xml:"description"`
	Encrypted   bool                            `xml:"encrypted"`
	StorageTier string                          `xml:"storageTier"`
	TagSet      *fakeapi.XMLSet[fakeapi.XMLTag] `xml:"tagSet"`
}

// describeSnapshots answers with the account's own snapshots (Owner.N
// self or the account; another owner's are none here) matching the
// SnapshotId.N list and the volume-id, tag:KEY, storage-tier and status
// filters, sorted by id, in pages of MaxResults (5..1000; none: every
// one). SnapshotId.N with MaxResults is InvalidParameterCombination, an id
// that does not exist InvalidSnapshot.NotFound. A pending snapshot
// completes after Options.SnapshotPolls answers that show it.
func (s *Server) describeSnapshots(account string, form url.Values) (any, *fakeapi.QueryError) {
	size, e := pageSize(form, MinPageSize, MaxSnapshotPageSize)
	if e != nil {
		return nil, e
	}
	ids := fakeapi.QueryList(form, "SnapshotId")
	if len(ids) > 0 && size > 0 {
		return nil, errorf(CodeInvalidParameterCombination, "The parameter snapshotSet cannot be used with the parameter maxResults")
	}
	for _, id := range ids {
		if e := checkSnapshotID(id); e != nil {
			return nil, e
		}
	}
	filters, e := queryFilters(form, "volume-id", "tag:", "storage-tier", "status")
	if e != nil {
		return nil, e
	}
	for _, o := range fakeapi.QueryList(form, "Owner") {
		if o != "self" && o != account {
			return &describeSnapshotsResponse{Xmlns: Namespace, RequestID: s.requestID()}, nil
		}
	}
	after, page, e := pageStart(form)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*Snapshot
	for i := range s.snapshots {
		if sn := &s.snapshots[i]; sn.Account == account {
			mine = append(mine, sn)
		}
	}
	slices.SortFunc(mine, func(a, b *Snapshot) int { return strings.Compare(a.ID, b.ID) })
	for _, id := range ids {
		if !slices.ContainsFunc(mine, func(sn *Snapshot) bool { return sn.ID == id }) {
			return nil, errorf(CodeSnapshotNotFound, "The snapshot '%s' does not exist.", id)
		}
	}
	out := &describeSnapshotsResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, sn := range mine {
		if sn.ID <= after || (len(ids) > 0 && !slices.Contains(ids, sn.ID)) || !filters.match(sn.value) {
			continue
		}
		if size > 0 && len(out.SnapshotSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.SnapshotSet.Items[size-1].SnapshotID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		out.SnapshotSet.Items = append(out.SnapshotSet.Items, s.snapshotXML(sn, account))
	}
	return out, nil
}

func (sn *Snapshot) value(name string) (string, bool) {
	switch name {
	case "volume-id":
		return sn.VolumeID, true
	case "storage-tier":
		return sn.StorageTier, true
	case "status":
		return sn.State, true
	}
	v, ok := sn.Tags[strings.TrimPrefix(name, "tag:")]
	return v, ok
}

func (s *Server) snapshotXML(sn *Snapshot, account string) xmlSnapshot {
	if sn.State == "pending" {
		if sn.polls >= s.opts.SnapshotPolls {
			sn.State = "completed"
		}
		sn.polls++
	}
	progress := "100%"
	if sn.State == "pending" {
		progress = "40%"
	}
	x := xmlSnapshot{SnapshotID: sn.ID, VolumeID: sn.VolumeID, Status: sn.State, StartTime: sn.Started.UTC().Format(timeFormat),
		Progress: progress, OwnerID: account, VolumeSize: sn.SizeGiB, Description: sn.Description, StorageTier: cmpOr(sn.StorageTier, "standard")}
	if len(sn.Tags) > 0 {
		ts := fakeapi.TagSet(sn.Tags)
		x.TagSet = &ts
	}
	return x
}

// ---- DeleteSnapshot ----

type deleteSnapshotResponse struct {
	XMLName   xml.Name `xml:"DeleteSnapshotResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Return    bool     `xml:"return"`
}

// deleteSnapshot deletes one of the account's snapshots: InvalidSnapshot.NotFound
// when it does not exist, InvalidSnapshot.InUse while an image (any state)
// is registered from it.
func (s *Server) deleteSnapshot(account string, form url.Values) (any, *fakeapi.QueryError) {
	id := form.Get("SnapshotId")
	if id == "" {
		return nil, errorf(CodeMissingParameter, "The request must contain the parameter snapshotId")
	}
	if e := checkSnapshotID(id); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.snapshots, func(sn Snapshot) bool { return sn.Account == account && sn.ID == id })
	if i < 0 {
		return nil, errorf(CodeSnapshotNotFound, "The snapshot '%s' does not exist.", id)
	}
	for _, im := range s.images[account] {
		if slices.Contains(im.Snapshots, id) {
			return nil, errorf(CodeSnapshotInUse, "The snapshot %s is currently in use by %s", id, im.ID)
		}
	}
	if s.opts.RecycleBin > 0 {
		r := s.snapshots[i]
		r.Started = time.Now().UTC()
		s.recycled = append(s.recycled, r)
	}
	s.snapshots = slices.Delete(s.snapshots, i, i+1)
	if s.LoseResponse() {
		return nil, errorf(CodeInternalError, "An internal error has occurred")
	}
	return &deleteSnapshotResponse{Xmlns: Namespace, RequestID: s.requestID(), Return: true}, nil
}

// ---- DescribeImages ----

type describeImagesResponse struct {
	XMLName   xml.Name                 `xml:"DescribeImagesResponse"`
	Xmlns     string                   `xml:"xmlns,attr"`
	RequestID string                   `xml:"requestId"`
	ImagesSet fakeapi.XMLSet[xmlImage] `xml:"imagesSet"`
	NextToken string                   `xml:"nextToken,omitempty"`
}

type xmlImage struct {
	ImageID            string                     `xml:"imageId"`
	ImageState         string                     `xml:"imageState"`
	ImageOwnerID       string                     `xml:"imageOwnerId"`
	Name               string                     `xml:"name"`
	RootDeviceType     string                     `xml:"rootDeviceType"`
	BlockDeviceMapping fakeapi.XMLSet[xmlMapping] `xml:"blockDeviceMapping"`
}

type xmlMapping struct {
	DeviceName string `xml:"deviceName"`
	EBS        struct {
		SnapshotID string `xml:"snapshotId"`
	} `xml:"ebs"`
}

// describeImages answers with the account's images (Owner.N self or the
// account) matching the ImageId.N list and the block-device-mapping.snapshot-id
// filter, disabled ones only with IncludeDisabled, in pages of MaxResults.
func (s *Server) describeImages(account string, form url.Values) (any, *fakeapi.QueryError) {
	size, e := pageSize(form, 1, MaxImagePageSize)
	if e != nil {
		return nil, e
	}
	ids := fakeapi.QueryList(form, "ImageId")
	if len(ids) > 0 && size > 0 {
		return nil, errorf(CodeInvalidParameterCombination, "The parameter ImageIds cannot be used with the parameter maxResults")
	}
	filters, e := queryFilters(form, "block-device-mapping.snapshot-id", "state")
	if e != nil {
		return nil, e
	}
	for _, o := range fakeapi.QueryList(form, "Owner") {
		if o != "self" && o != account {
			return &describeImagesResponse{Xmlns: Namespace, RequestID: s.requestID()}, nil
		}
	}
	after, page, e := pageStart(form)
	if e != nil {
		return nil, e
	}
	disabled := form.Get("IncludeDisabled") == "true"
	s.mu.Lock()
	defer s.mu.Unlock()
	ims := slices.Clone(s.images[account])
	slices.SortFunc(ims, func(a, b Image) int { return strings.Compare(a.ID, b.ID) })
	out := &describeImagesResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, im := range ims {
		if im.ID <= after || (len(ids) > 0 && !slices.Contains(ids, im.ID)) || (im.State == "disabled" && !disabled) {
			continue
		}
		if !filters.matchAny(func(name string) []string {
			if name == "state" {
				return []string{im.State}
			}
			return im.Snapshots
		}) {
			continue
		}
		if size > 0 && len(out.ImagesSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.ImagesSet.Items[size-1].ImageID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		x := xmlImage{ImageID: im.ID, ImageState: im.State, ImageOwnerID: account, Name: im.Name, RootDeviceType: "ebs"}
		for i, sn := range im.Snapshots {
			m := xmlMapping{DeviceName: fmt.Sprintf("/dev/xvd%c", 'a'+i%26)}
			m.EBS.SnapshotID = sn
			x.BlockDeviceMapping.Items = append(x.BlockDeviceMapping.Items, m)
		}
		out.ImagesSet.Items = append(out.ImagesSet.Items, x)
	}
	return out, nil
}

// ---- ListSnapshotsInRecycleBin ----

type listRecycleBinResponse struct {
	XMLName     xml.Name                    `xml:"ListSnapshotsInRecycleBinResponse"`
	Xmlns       string                      `xml:"xmlns,attr"`
	RequestID   string                      `xml:"requestId"`
	SnapshotSet fakeapi.XMLSet[xmlRecycled] `xml:"snapshotSet"`
	NextToken   string                      `xml:"nextToken,omitempty"`
}

type xmlRecycled struct {
	SnapshotID          string `xml:"snapshotId"`
	RecycleBinEnterTime string `xml:"recycleBinEnterTime"`
	RecycleBinExitTime  string `xml:"recycleBinExitTime"`
	Description         string `xml:"description"`
	VolumeID            string `xml:"volumeId"`
}

// InRecycleBin reports whether a deleted snapshot is in the Recycle Bin.
func (s *Server) InRecycleBin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.recycled, func(o Snapshot) bool { return o.ID == id })
}

// listRecycleBin answers with the account's snapshots in the Recycle Bin,
// sorted by id, in pages of MaxResults (5..1000).
func (s *Server) listRecycleBin(account string, form url.Values) (any, *fakeapi.QueryError) {
	size, e := pageSize(form, MinPageSize, MaxSnapshotPageSize)
	if e != nil {
		return nil, e
	}
	after, page, e := pageStart(form)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []Snapshot
	for _, r := range s.recycled {
		if r.Account == account {
			mine = append(mine, r)
		}
	}
	slices.SortFunc(mine, func(a, b Snapshot) int { return strings.Compare(a.ID, b.ID) })
	out := &listRecycleBinResponse{Xmlns: Namespace, RequestID: s.requestID()}
	for _, r := range mine {
		if r.ID <= after {
			continue
		}
		if size > 0 && len(out.SnapshotSet.Items) == size {
			out.NextToken = fakeapi.PageToken{Page: page + 1, After: out.SnapshotSet.Items[size-1].SnapshotID, Query: fakeapi.QueryFingerprint(form)}.String()
			break
		}
		out.SnapshotSet.Items = append(out.SnapshotSet.Items, xmlRecycled{SnapshotID: r.ID, VolumeID: r.VolumeID, Description: r.Description,
			RecycleBinEnterTime: r.Started.Format(timeFormat), RecycleBinExitTime: r.Started.Add(s.opts.RecycleBin).Format(timeFormat)})
	}
	return out, nil
}
