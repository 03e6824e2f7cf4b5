package gcefake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Image is an image to seed (AddImage): what images.list shows of it.
type Image struct {
	Name string
	// SourceSnapshot and SourceDisk are paths (projects/P/global/snapshots/N,
	// projects/P/zones/Z/disks/D) or full URLs; the wire carries URLs.
	SourceSnapshot string
	SourceDisk     string
	Status         string // default READY
}

// AddSnapshot seeds a snapshot (replacing one of that name) and returns
// its path, projects/P/global/snapshots/N. SourceDisk is a disk key or
// URL; Status defaults to READY, Created to the fake's clock, ID to a new
// one, Type to STANDARD.
func (s *Server) AddSnapshot(projectID string, sn Snapshot) string {
	if projectID == "" || sn.Name == "" {
		panic(fmt.Sprintf("gcefake.AddSnapshot: need a project and a name, got %q %+v", projectID, sn))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn.Project, sn.SourceDisk, sn.Labels, sn.op = projectID, trimBase(sn.SourceDisk), maps.Clone(sn.Labels), nil
	if sn.Status == "" {
		sn.Status = "READY"
	}
	if sn.Created.IsZero() {
		sn.Created = s.opts.Now()
	}
	if sn.ID == "" {
		sn.ID = s.id()
	}
	if sn.Type == "" {
		sn.Type = "STANDARD"
	}
	key := projectID + "/" + sn.Name
	if s.snapshots[key] == nil {
		s.snapOrder = append(s.snapOrder, key)
	}
	s.snapshots[key] = &sn
	return "projects/" + projectID + "/global/snapshots/" + sn.Name
}

// HasSnapshot says whether the project has a snapshot of that name.
func (s *Server) HasSnapshot(projectID, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshots[projectID+"/"+name] != nil
}

// AddImage seeds an image of a project.
func (s *Server) AddImage(projectID string, im Image) {
	if projectID == "" || im.Name == "" {
		panic(fmt.Sprintf("gcefake.AddImage: need a project and a name, got %q %+v", projectID, im))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if im.Status == "" {
		im.Status = "READY"
	}
	pr := s.project(projectID)
	if pr.images == nil {
		pr.images = map[string]*Image{}
	}
	pr.images[im.Name] = &im
}

// RemoveImage deletes an image of a project.
func (s *Server) RemoveImage(projectID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr := s.projects[projectID]; pr != nil {
		delete(pr.images, name)
	}
}

// wireURL is a path or URL as the API writes it: a full URL.
func wireURL(pathOrURL string) string {
	if pathOrURL == "" || strings.HasPrefix(pathOrURL, "http") {
		return pathOrURL
	}
	return BaseURL + pathOrURL
}

// snapshotJSON is a snapshot as snapshots.get and snapshots.list write
// it (compute#snapshot): int64 fields as strings, URLs in full.
func snapshotJSON(sn *Snapshot) map[string]any {
	body := map[string]any{
		"kind":               "compute#snapshot",
		"id":                 sn.ID,
		"name":               sn.Name,
		"creationTimestamp":  wireTime(sn.Created),
		"status":             sn.Status,
		"sourceDisk":         wireURL(sn.SourceDisk),
		"diskSizeGb":         strconv.FormatInt(sn.SizeGB, 10),
		"storageBytes":       strconv.FormatInt(sn.StorageBytes, 10),
		"storageBytesStatus": "UP_TO_DATE",
		"labelFingerprint":   fingerprint(sn.Labels),
		"selfLink":           BaseURL + "projects/" + sn.Project + "/global/snapshots/" + sn.Name,
		"snapshotType":       sn.Type,
	}
	if sn.SourceDiskID != "" {
		body["sourceDiskId"] = sn.SourceDiskID
	}
	if sn.Description != "" {
		body["description"] = sn.Description
	}
	if len(sn.Labels) > 0 {
		body["labels"] = maps.Clone(sn.Labels)
	}
	if sn.SchedulePolicy != "" {
		body["sourceSnapshotSchedulePolicy"] = wireURL(sn.SchedulePolicy)
	}
	return body
}

// listPage reads a list call's maxResults (0 to 500; 0 is 500, as the
// API's default) and pageToken (after which name the page starts).
func listPage(w http.ResponseWriter, q url.Values) (size int, after string, ok bool) {
	size = MaxPageSize
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxPageSize {
			writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("Invalid value for field 'maxResults': '%s'. Must be between 0 and %d.", v, MaxPageSize), "")
			return 0, "", false
		}
		if n > 0 {
			size = n
		}
	}
	after, ok = pageAfter(w, q.Get("pageToken"))
	return size, after, ok
}

// pageAfter reads a pageToken: after which key its page starts ("" for
// the first page); a token the fake did not write is a 400.
func pageAfter(w http.ResponseWriter, tok string) (string, bool) {
	if tok == "" {
		return "", true
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	var pt pageToken
	if err == nil {
		err = json.Unmarshal(b, &pt)
	}
	if err != nil || pt.After == "" {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'pageToken': '"+tok+"'.", "")
		return "", false
	}
	return pt.After, true
}

// writeList answers a list call with one page of items sorted by name.
func writeList(w http.ResponseWriter, kind, self string, names []string, item func(string) map[string]any, size int, after string) {
	slices.Sort(names)
	start, _ := slices.BinarySearch(names, after)
	if start < len(names) && names[start] == after {
		start++
	}
	end := min(start+size, len(names))
	items := make([]map[string]any, 0, end-start)
	for _, n := range names[start:end] {
		items = append(items, item(n))
	}
	resp := map[string]any{"kind": kind, "id": self, "selfLink": BaseURL + self}
	if len(items) > 0 {
		resp["items"] = items
	}
	if end < len(names) {
		b, _ := json.Marshal(pageToken{After: names[end-1]})
		resp["nextPageToken"] = base64.RawURLEncoding.EncodeToString(b)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) listSnapshots(w http.ResponseWriter, req *http.Request, rt route) {
	size, after, ok := listPage(w, req.URL.Query())
	if !ok {
		return
	}
	s.mu.Lock()
	s.advanceTimedOps()
	bodies := map[string]map[string]any{}
	for _, sn := range s.snapshots {
		if sn.Project == rt.project {
			bodies[sn.Name] = snapshotJSON(sn)
		}
	}
	s.mu.Unlock()
	writeList(w, "compute#snapshotList", "projects/"+rt.project+"/global/snapshots", slices.Collect(maps.Keys(bodies)),
		func(n string) map[string]any { return bodies[n] }, size, after)
}

func (s *Server) listImages(w http.ResponseWriter, req *http.Request, rt route) {
	size, after, ok := listPage(w, req.URL.Query())
	if !ok {
		return
	}
	s.mu.Lock()
	bodies := map[string]map[string]any{}
	if pr := s.projects[rt.project]; pr != nil {
		for _, im := range pr.images {
			b := map[string]any{"kind": "compute#image", "name": im.Name, "status": im.Status,
				"selfLink": BaseURL + "projects/" + rt.project + "/global/images/" + im.Name}
			if im.SourceSnapshot != "" {
				b["sourceSnapshot"] = wireURL(im.SourceSnapshot)
				b["sourceType"] = "RAW"
			}
			if im.SourceDisk != "" {
				b["sourceDisk"] = wireURL(im.SourceDisk)
			}
			bodies[im.Name] = b
		}
	}
	s.mu.Unlock()
	writeList(w, "compute#imageList", "projects/"+rt.project+"/global/images", slices.Collect(maps.Keys(bodies)),
		func(n string) map[string]any { return bodies[n] }, size, after)
}

// deleteSnapshot answers snapshots.delete with a global operation that
// removes the snapshot when it is done (FailNextOp fails it instead).
func (s *Server) deleteSnapshot(w http.ResponseWriter, rt route) {
	key := rt.project + "/" + rt.name
	path := "projects/" + rt.project + "/global/snapshots/" + rt.name
	s.mu.Lock()
	deleted := s.advanceTimedOps()
	sn := s.snapshots[key]
	var body map[string]any
	if sn != nil {
		prev := sn.Status
		sn.Status = "DELETING"
		op := s.newOp(rt, "delete", rt.method, sn.ID, func() string {
			if s.snapshots[key] == sn {
				delete(s.snapshots, key)
				s.snapOrder = slices.DeleteFunc(s.snapOrder, func(k string) bool { return k == key })
			}
			return ""
		})
		op.target = path
		if op.failCode != "" {
			sn.Status = prev
		}
		body = s.opJSON(op)
		body["status"] = "PENDING"
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
	if body == nil {
		notFound(w, path)
		return
	}
	writeJSON(w, http.StatusOK, body)
}
