package gcefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: body %q is not JSON: %v", method, url, b, err)
	}
	return resp.StatusCode, m
}

func errReason(m map[string]any) (code float64, reason, domain string) {
	e, _ := m["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	if len(errs) == 1 {
		first := errs[0].(map[string]any)
		reason, _ = first["reason"].(string)
		domain, _ = first["domain"].(string)
	}
	code, _ = e["code"].(float64)
	return code, reason, domain
}

func TestUnknownPathIsGoogle404(t *testing.T) {
	var logged []string
	s := New(Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	defer s.Close()
	st, m := do(t, "GET", s.URL()+"/compute/v1/projects/p/zones/z/instances/i", "")
	if code, reason, _ := errReason(m); st != 404 || code != 404 || reason != "notFound" {
		t.Errorf("status %d body %v", st, m)
	}
	if s.Calls(MethodUnknown) != 1 || len(logged) != 1 || !strings.Contains(logged[0], "/instances/i") {
		t.Errorf("unknown calls %d, logged %v", s.Calls(MethodUnknown), logged)
	}
}

func TestAggregatedListWire(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.AddDisk("p", Disk{Zone: "us-west1-b", Name: "a", SizeGB: 10, Labels: map[string]string{"k": "v"}})
	s.AddDisk("p", Disk{Zone: "us-west1-b", Name: "b", SizeGB: 10})
	s.AddDisk("p", Disk{Region: "us-west1", Name: "r", SizeGB: 10, ReplicaZones: []string{"us-west1-a", "us-west1-b"}})
	s.SetScopeWarning("p", "zones/us-west1-c", "UNREACHABLE", "")

	url := s.URL() + "/compute/v1/projects/p/aggregated/disks?maxResults=2&returnPartialSuccess=true&filter=x"
	var names []string
	pages := 0
	for {
		st, m := do(t, "GET", url, "")
		if st != 200 {
			t.Fatalf("status %d: %v", st, m)
		}
		pages++
		items := m["items"].(map[string]any)
		if len(items) != 3 {
			t.Errorf("page %d has scopes %v, want all three every page", pages, items)
		}
		w := items["zones/us-west1-c"].(map[string]any)["warning"].(map[string]any)
		if w["code"] != "UNREACHABLE" {
			t.Errorf("warning %v", w)
		}
		for sc, v := range items {
			v := v.(map[string]any)
			ds, _ := v["disks"].([]any)
			if len(ds) == 0 && v["warning"] == nil {
				t.Errorf("scope %s has neither disks nor warning", sc)
			}
			for _, d := range ds {
				d := d.(map[string]any)
				names = append(names, d["name"].(string))
				if _, ok := d["sizeGb"].(string); !ok {
					t.Errorf("sizeGb not a string: %v", d["sizeGb"])
				}
				if _, ok := d["id"].(string); !ok {
					t.Errorf("id not a string: %v", d["id"])
				}
				if _, ok := d["users"]; ok {
					t.Errorf("empty users not omitted")
				}
				if ts, _ := d["creationTimestamp"].(string); !strings.HasSuffix(ts, "-07:00") {
					t.Errorf("creationTimestamp %q", ts)
				}
			}
		}
		tok, _ := m["nextPageToken"].(string)
		if tok == "" {
			break
		}
		url = s.URL() + "/compute/v1/projects/p/aggregated/disks?maxResults=2&pageToken=" + tok
	}
	// items is a JSON object: scopes come in no particular order.
	sort.Strings(names)
	if pages != 2 || strings.Join(names, ",") != "a,b,r" {
		t.Errorf("pages %d names %v", pages, names)
	}
}

func TestDeleteOperationLifecycle(t *testing.T) {
	s := New(Options{OpPolls: 1})
	defer s.Close()
	k := s.AddDisk("p", Disk{Zone: "z-a", Name: "d", SizeGB: 1})
	st, op := do(t, "DELETE", s.URL()+"/compute/v1/projects/p/zones/z-a/disks/d", "")
	if st != 200 || op["kind"] != "compute#operation" || op["status"] != "PENDING" ||
		op["targetLink"] != BaseURL+k || !strings.HasSuffix(op["zone"].(string), "/zones/z-a") {
		t.Fatalf("delete answered %d %v", st, op)
	}
	d, _ := s.Disk(k)
	if d.Status != "DELETING" {
		t.Errorf("status during delete %q", d.Status)
	}
	opURL := s.URL() + "/compute/v1/projects/p/zones/z-a/operations/" + op["name"].(string)
	if _, m := do(t, "GET", opURL, ""); m["status"] != "RUNNING" || !s.HasDisk(k) {
		t.Errorf("first poll %v", m)
	}
	if _, m := do(t, "POST", opURL+"/wait", ""); m["status"] != "DONE" || s.HasDisk(k) {
		t.Errorf("wait %v", m)
	}
	if s.MutatingCalls() != 1 || s.Calls(MethodZoneOperationsWait) != 1 || s.Calls(MethodZoneOperationsGet) != 1 {
		t.Errorf("counts %v mutating %d", s.CallCounts(), s.MutatingCalls())
	}
	if st, m := do(t, "GET", s.URL()+"/compute/v1/projects/p/global/operations/nope", ""); st != 404 {
		t.Errorf("unknown global op: %d %v", st, m)
	}
}

func TestOpDelayAndSnapshots(t *testing.T) {
	s := New(Options{OpDelay: 30 * time.Millisecond})
	defer s.Close()
	s.AddDisk("p", Disk{Region: "r1", Name: "d", SizeGB: 5})
	st, op := do(t, "POST", s.URL()+"/compute/v1/projects/p/regions/r1/disks/d/createSnapshot",
		`{"name":"snap","labels":{"a":"b"}}`)
	if st != 200 || !strings.HasSuffix(op["region"].(string), "/regions/r1") {
		t.Fatalf("%d %v", st, op)
	}
	opURL := s.URL() + "/compute/v1/projects/p/regions/r1/operations/" + op["name"].(string)
	if _, m := do(t, "GET", opURL, ""); m["status"] != "RUNNING" {
		t.Errorf("before delay: %v", m)
	}
	start := time.Now()
	if _, m := do(t, "POST", opURL+"/wait", ""); m["status"] != "DONE" || time.Since(start) < 10*time.Millisecond {
		t.Errorf("wait: %v after %v", m, time.Since(start))
	}
	st, sn := do(t, "GET", s.URL()+"/compute/v1/projects/p/global/snapshots/snap", "")
	if st != 200 || sn["status"] != "READY" || sn["diskSizeGb"] != "5" || sn["labels"].(map[string]any)["a"] != "b" {
		t.Errorf("snapshot %d %v", st, sn)
	}
}

func TestFaults(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.SetQuota("p", "r", "SSD_TOTAL_GB", 10, 2)
	s.FailNext(MethodRegionsGet, 1, 429, "")
	s.FailNext("*", 1, 403, "quotaExceeded")
	url := s.URL() + "/compute/v1/projects/p/regions/r"
	if st, m := do(t, "GET", url, ""); st != 429 {
		t.Errorf("%d %v", st, m)
	} else if code, reason, domain := errReason(m); code != 429 || reason != "rateLimitExceeded" || domain != "usageLimits" {
		t.Errorf("429 body %v", m)
	}
	if st, m := do(t, "GET", url, ""); st != 403 {
		t.Errorf("%d %v", st, m)
	} else if _, reason, domain := errReason(m); reason != "quotaExceeded" || domain != "usageLimits" {
		t.Errorf("403 body %v", m)
	}
	st, m := do(t, "GET", url, "")
	qs := m["quotas"].([]any)
	if st != 200 || len(qs) != 1 || qs[0].(map[string]any)["limit"] != 10.0 {
		t.Errorf("%d %v", st, m)
	}
	if st, _ := do(t, "GET", s.URL()+"/compute/v1/projects/p/regions/unknown", ""); st != 404 {
		t.Errorf("unknown region %d", st)
	}
	if s.Calls(MethodRegionsGet) != 4 {
		t.Errorf("calls %v", s.CallCounts())
	}
}

// snapshots.list and images.list speak the compute v1 list shape: kind,
// items, nextPageToken while more remain; maxResults 0..500 (0 is 500),
// anything else a 400; int64 fields as JSON strings, links as full URLs.
func TestSnapshotListWire(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for i := range 3 {
		s.AddSnapshot("p", Snapshot{Name: fmt.Sprintf("s%d", i), SourceDisk: "projects/p/zones/z-a/disks/d", SizeGB: 10, StorageBytes: 1 << 30})
	}
	base := s.URL() + "/compute/v1/projects/p/global/snapshots"
	st, m := do(t, "GET", base+"?maxResults=2", "")
	items, _ := m["items"].([]any)
	if st != 200 || m["kind"] != "compute#snapshotList" || len(items) != 2 || m["nextPageToken"] == nil {
		t.Fatalf("page 1: %d %v", st, m)
	}
	first := items[0].(map[string]any)
	if first["kind"] != "compute#snapshot" || first["diskSizeGb"] != "10" || first["storageBytes"] != "1073741824" ||
		first["sourceDisk"] != BaseURL+"projects/p/zones/z-a/disks/d" || first["status"] != "READY" || first["snapshotType"] != "STANDARD" {
		t.Fatalf("snapshot: %v", first)
	}
	st, m = do(t, "GET", base+"?maxResults=2&pageToken="+m["nextPageToken"].(string), "")
	if items, _ := m["items"].([]any); st != 200 || len(items) != 1 || m["nextPageToken"] != nil {
		t.Fatalf("page 2: %d %v", st, m)
	}
	if st, m := do(t, "GET", base+"?maxResults=501", ""); st != 400 {
		t.Fatalf("maxResults 501: %d %v", st, m)
	}
	s.AddImage("p", Image{Name: "golden", SourceSnapshot: "projects/p/global/snapshots/s0"})
	st, m = do(t, "GET", s.URL()+"/compute/v1/projects/p/global/images", "")
	if items, _ := m["items"].([]any); st != 200 || m["kind"] != "compute#imageList" || len(items) != 1 ||
		items[0].(map[string]any)["sourceSnapshot"] != BaseURL+"projects/p/global/snapshots/s0" {
		t.Fatalf("images: %d %v", st, m)
	}
}

// snapshots.delete answers a global operation targeting the snapshot; the
// snapshot is gone once it is done, and a second delete is a 404.
func TestSnapshotDeleteWire(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.AddSnapshot("p", Snapshot{Name: "s0"})
	st, op := do(t, "DELETE", s.URL()+"/compute/v1/projects/p/global/snapshots/s0", "")
	if st != 200 || op["kind"] != "compute#operation" || op["targetLink"] != BaseURL+"projects/p/global/snapshots/s0" ||
		!strings.Contains(op["selfLink"].(string), "/global/operations/") {
		t.Fatalf("delete: %d %v", st, op)
	}
	if st, m := do(t, "GET", s.URL()+"/compute/v1/projects/p/global/operations/"+op["name"].(string), ""); st != 200 || m["status"] != "DONE" {
		t.Fatalf("operation: %d %v", st, m)
	}
	if s.HasSnapshot("p", "s0") {
		t.Fatal("still there")
	}
	if st, m := do(t, "DELETE", s.URL()+"/compute/v1/projects/p/global/snapshots/s0", ""); st != 404 {
		t.Fatalf("second delete: %d %v", st, m)
	}
}
