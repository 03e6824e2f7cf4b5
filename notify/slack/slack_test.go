package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// receiver is a local incoming webhook: it records every body and answers
// with the responses given, then 200 "ok".
type receiver struct {
	mu      sync.Mutex
	bodies  [][]byte
	answers []answer
}

type answer struct {
	status     int
	body       string
	retryAfter string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b)
	var a answer
	if len(rc.answers) > 0 {
		a, rc.answers = rc.answers[0], rc.answers[1:]
	} else {
		a = answer{status: 200, body: "ok"}
	}
	rc.mu.Unlock()
	if r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "text/plain;charset=utf-8")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (rc *receiver) posts() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies...)
}

func newReceiver(t *testing.T, answers ...answer) (*receiver, string) {
	rc := &receiver{answers: answers}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL + "/services/T0000/B0000/s3cr3tt0ken"
}

// waits records the client's sleeps instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

// bigReport is a fleet of thousands of decisions over three kinds, with
// held-back notes, warnings in overview sections, and ids and reasons with
// characters Slack reads as markup.
func bigReport() *report.Report {
	now := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	p := &engine.Plan{Version: engine.SchemaVersion, GeneratedAt: now,
		Summaries: []string{"disks delete 1200, mark 300, report 0, keep 5000", "PVCs delete 0, report 40", "images delete 4900, mark 100, keep 20000 listed"}}
	for i := 0; i < 40; i++ {
		p.Sources = append(p.Sources, engine.Source{Kind: "cluster", Name: fmt.Sprintf("prod-%02d", i), Complete: i != 7})
	}
	p.Incomplete = true
	p.Blocked = append(p.Blocked, "cluster prod-07 is incomplete (list pods: Forbidden): no disk it could reference is deleted this run")
	for i := 0; i < 60; i++ {
		p.Blocked = append(p.Blocked, fmt.Sprintf("repository 123456789012/us-east-1/team-%d/app <held> & waiting: %s", i, strings.Repeat("x", 150)))
	}
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf("  ! proj-%d europe-west1 SSD_TOTAL_GB is 97.0%% used (1940 of 2000 GB), 80.0%% after this plan.", i),
			fmt.Sprintf("  ! proj-%d europe-west1 SSD_TOTAL_GB grows 40 GB a day: full around 2026-11-25 09:00 UTC at this rate.", i),
			"  ? an unknown quota, not a warning")
	}
	p.Sections = append(p.Sections, layout.Section{Key: "headroom", Title: "QUOTA HEADROOM", Place: layout.Overview,
		Blocks: []layout.Block{{Header: []string{"PROJECT"}, Rows: [][]string{{"proj-0"}}, Lines: lines}}})
	p.Sections = append(p.Sections, layout.Section{Title: "GCE DISKS", Place: layout.Details,
		Blocks: []layout.Block{{Lines: []string{"  ! a details line is not a warning"}}}})
	for i := 0; i < 1500; i++ {
		a := engine.Delete
		if i >= 1200 {
			a = engine.Mark
		}
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "gce-disk", ID: fmt.Sprintf("projects/proj-%d/zones/europe-west1-b/disks/pvc-%08d", i%30, i),
			Action: a, Reason: "orphan for 7d <no PV> & no users", Frees: amount.Free(100, gcepd.GB)})
	}
	for i := 0; i < 5000; i++ {
		a := engine.Delete
		if i >= 4900 {
			a = engine.Mark
		}
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "ecr-image", ID: fmt.Sprintf("123456789012/us-east-1/shop/api@sha256:%064d", i),
			Action: a, Reason: "trim: oldest pushed " + strings.Repeat("é", 400), Frees: amount.Free(200e6, ecrimage.Bytes)})
	}
	for i := 0; i < 5000; i++ {
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "gce-disk", ID: fmt.Sprintf("kept-%d", i), Action: engine.Keep, Reason: "in use"})
	}
	r := report.New(p, nil, false)
	return r
}

// checkLimits parses a posted body as generic JSON and checks it against
// every documented Block Kit limit for messages.
func checkLimits(t *testing.T, i int, body []byte) (blocks []map[string]any) {
	t.Helper()
	var m struct {
		Text   *string          `json:"text"`
		Blocks []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("message %d is not JSON: %v", i, err)
	}
	if m.Text == nil || strings.TrimSpace(*m.Text) == "" {
		t.Errorf("message %d has no top-level text fallback", i)
	} else if n := utf8.RuneCountInString(*m.Text); n > MaxText {
		t.Errorf("message %d text is %d characters", i, n)
	}
	if len(m.Blocks) == 0 || len(m.Blocks) > 50 {
		t.Errorf("message %d has %d blocks; Slack takes 1 to 50", i, len(m.Blocks))
	}
	textOf := func(v any) (string, string) {
		o, _ := v.(map[string]any)
		typ, _ := o["type"].(string)
		s, _ := o["text"].(string)
		return typ, s
	}
	for j, b := range m.Blocks {
		where := fmt.Sprintf("message %d block %d (%v)", i, j, b["type"])
		switch b["type"] {
		case "header":
			typ, s := textOf(b["text"])
			if typ != "plain_text" {
				t.Errorf("%s: header text is %q, must be plain_text", where, typ)
			}
			if n := utf8.RuneCountInString(s); n == 0 || n > 150 {
				t.Errorf("%s: header text is %d characters (1 to 150)", where, n)
			}
		case "section":
			hasText := false
			if b["text"] != nil {
				_, s := textOf(b["text"])
				hasText = s != ""
				if n := utf8.RuneCountInString(s); n > 3000 {
					t.Errorf("%s: section text is %d characters (max 3000)", where, n)
				}
			}
			fields, _ := b["fields"].([]any)
			if len(fields) > 10 {
				t.Errorf("%s: %d fields (max 10)", where, len(fields))
			}
			for _, f := range fields {
				if _, s := textOf(f); utf8.RuneCountInString(s) > 2000 || s == "" {
					t.Errorf("%s: field of %d characters (1 to 2000)", where, utf8.RuneCountInString(s))
				}
			}
			if !hasText && len(fields) == 0 {
				t.Errorf("%s: section with neither text nor fields", where)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > 10 {
				t.Errorf("%s: %d context elements (1 to 10)", where, len(els))
			}
			for _, e := range els {
				if _, s := textOf(e); utf8.RuneCountInString(s) > 3000 {
					t.Errorf("%s: context text of %d characters", where, utf8.RuneCountInString(s))
				}
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > 25 {
				t.Errorf("%s: %d actions elements", where, len(els))
			}
		case "divider":
		default:
			t.Errorf("%s: unknown block type", where)
		}
	}
	return m.Blocks
}

func sectionText(b map[string]any) string {
	o, _ := b["text"].(map[string]any)
	s, _ := o["text"].(string)
	return s
}

func TestLargeFleetRespectsEveryLimit(t *testing.T) {
	for _, maxRows := range []int{20, 500} {
		t.Run(fmt.Sprint("maxRows=", maxRows), func(t *testing.T) {
			rc, url := newReceiver(t)
			c := &Client{URL: url, Interval: -1}
			rep := bigReport()
			err := c.Send(context.Background(), Build(rep, Options{Fleet: "prod", ReportURL: "https://reports.example.com/reclaim/latest", MaxRows: maxRows,
				Nouns: map[string]string{"gce-disk": "disks", "ecr-image": "images"}}))
			if err != nil {
				t.Fatal(err)
			}
			posts := rc.posts()
			if maxRows == 500 && len(posts) < 2 {
				t.Fatalf("%d rows of each list fit one message? %d messages", maxRows, len(posts))
			}
			var all []string
			for i, b := range posts {
				for _, bl := range checkLimits(t, i, b) {
					all = append(all, fmt.Sprint(bl["type"])+": "+sectionText(bl))
				}
			}
			text := strings.Join(all, "\n")
			first := posts[0]
			var m0 Message
			json.Unmarshal(first, &m0)
			if !strings.Contains(m0.Text, "1200 disks (120000 GB) and 4900 images (980.0 GB) would be deleted") || !strings.Contains(m0.Text, "reclaim dry-run · prod") {
				t.Errorf("fallback text: %q", m0.Text)
			}
			if m0.Blocks[0].Type != "header" || m0.Blocks[0].Text.Text != "reclaim dry-run · prod" {
				t.Errorf("first block: %+v", m0.Blocks[0])
			}
			// Warnings come before what would be deleted.
			w, d := strings.Index(text, "*held back*"), strings.Index(text, "*disks: 1200 would be deleted*")
			if w < 0 || d < 0 || w > d {
				t.Errorf("warnings at %d, disks at %d:\n%s", w, d, text[:min(len(text), 3000)])
			}
			for _, want := range []string{
				"cluster prod-07 is incomplete",             // the first held-back note
				"incomplete sources: cluster prod-07",       // the sources
				"SSD_TOTAL_GB is 97.0% used",                // a headroom warning
				"full around 2026-11-25 09:00 UTC",          // a projection
				"&lt;held&gt; &amp; waiting",                // escaped markup
				fmt.Sprintf("+%d more disks", 1200-maxRows), // the cut
				fmt.Sprintf("+%d more images", 4900-maxRows),
				"300 more marked",
				"https://reports.example.com/reclaim/latest",
			} {
				if !strings.Contains(text, want) && !strings.Contains(string(posts[len(posts)-1]), want) {
					t.Errorf("messages lack %q", want)
				}
			}
			for _, unwanted := range []string{"an unknown quota", "a details line", "kept-1"} {
				if strings.Contains(text, unwanted) {
					t.Errorf("messages contain %q", unwanted)
				}
			}
			if maxRows == 20 && !strings.Contains(text, "+42 more warnings") {
				t.Errorf("held-back notes (62) not cut at maxRows")
			}
			if h := strings.Index(text, "*QUOTA HEADROOM*: 60 warnings"); h < 0 || h > d {
				t.Errorf("headroom warnings at %d, disks at %d", h, d)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	rc, url := newReceiver(t, answer{status: 429, retryAfter: "3"}, answer{status: 429, retryAfter: "1", body: `{"ok":false,"error":"ratelimited"}`})
	w := &waits{}
	c := &Client{URL: url, Sleep: w.sleep}
	if err := c.Post(context.Background(), Message{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.posts()); n != 3 {
		t.Fatalf("%d posts, want 3 (two 429s, then ok)", n)
	}
	if fmt.Sprint(w.d) != "[3s 1s]" {
		t.Fatalf("waited %v, want [3s 1s] as Retry-After said", w.d)
	}
}

func TestRetryAfterBeyondBudgetGivesUp(t *testing.T) {
	rc, url := newReceiver(t, answer{status: 429, retryAfter: "600"})
	w := &waits{}
	c := &Client{URL: url, Sleep: w.sleep, MaxWait: time.Minute}
	err := c.Post(context.Background(), Message{Text: "hello"})
	var se *Error
	if !errors.As(err, &se) || se.Status != 429 || len(w.d) != 0 || len(rc.posts()) != 1 {
		t.Fatalf("err %v, waits %v, posts %d", err, w.d, len(rc.posts()))
	}
}

func TestRateLimitedAttemptsAreBounded(t *testing.T) {
	var as []answer
	for range 10 {
		as = append(as, answer{status: 429, retryAfter: "1"})
	}
	rc, url := newReceiver(t, as...)
	c := &Client{URL: url, Sleep: (&waits{}).sleep, MaxAttempts: 4}
	err := c.Post(context.Background(), Message{Text: "hello"})
	if err == nil || len(rc.posts()) != 4 || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err %v after %d posts, want failure after 4", err, len(rc.posts()))
	}
}

func TestClientErrorsAreReportedWithSlacksWordAndNotRetried(t *testing.T) {
	for status, word := range map[int]string{404: "channel_not_found", 410: "channel_is_archived", 400: "invalid_payload", 403: "action_prohibited"} {
		rc, url := newReceiver(t, answer{status: status, body: word})
		w := &waits{}
		c := &Client{URL: url, Sleep: w.sleep}
		err := c.Post(context.Background(), Message{Text: "hello"})
		var se *Error
		if !errors.As(err, &se) || se.Status != status || se.Word != word {
			t.Fatalf("%d: err %#v", status, err)
		}
		if !strings.Contains(err.Error(), word) || strings.Contains(err.Error(), "s3cr3tt0ken") {
			t.Errorf("error %q: want Slack's word, never the URL", err)
		}
		if n := len(rc.posts()); n != 1 || len(w.d) != 0 {
			t.Errorf("%d %s retried: %d posts, waits %v", status, word, n, w.d)
		}
	}
}

func TestServerErrorsAreRetriedWithBackoff(t *testing.T) {
	html := "<!DOCTYPE html><html><head><title>Server Error | Slack</title></head><body>x</body></html>"
	rc, url := newReceiver(t, answer{status: 500, body: "rollup_error"}, answer{status: 503, body: html})
	w := &waits{}
	c := &Client{URL: url, Sleep: w.sleep, Backoff: time.Second}
	if err := c.Post(context.Background(), Message{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if len(rc.posts()) != 3 || fmt.Sprint(w.d) != "[1s 2s]" {
		t.Fatalf("posts %d, waits %v; want 3 and [1s 2s]", len(rc.posts()), w.d)
	}

	// Always 5xx: bounded, and the word (or the status text, for HTML) is said.
	_, url = newReceiver(t, answer{status: 500, body: "rollup_error"}, answer{status: 502, body: html}, answer{status: 502, body: html})
	c = &Client{URL: url, Sleep: (&waits{}).sleep, MaxAttempts: 3}
	err := c.Post(context.Background(), Message{Text: "hello"})
	if err == nil || !strings.Contains(err.Error(), "502 (Bad Gateway) after 3 attempts") {
		t.Fatalf("err %v", err)
	}
}

func TestNetworkErrorNeverQuotesTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/services/T/B/s3cr3tt0ken"
	srv.Close()
	c := &Client{URL: url, Sleep: (&waits{}).sleep, MaxAttempts: 2}
	err := c.Post(context.Background(), Message{Text: "hello"})
	if err == nil || strings.Contains(err.Error(), "s3cr3tt0ken") || strings.Contains(err.Error(), "/services/") {
		t.Fatalf("err %v", err)
	}
}

func TestContextCancelStopsWaiting(t *testing.T) {
	_, url := newReceiver(t, answer{status: 429, retryAfter: "30"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := (&Client{URL: url}).Post(ctx, Message{Text: "hello"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestWireShapeMatchesSlackSample(t *testing.T) {
	// The shapes of ../shared/reference/wire-samples/slack: header with
	// plain_text, section with mrkdwn text, divider, context with mrkdwn elements.
	b, err := json.Marshal(Build(bigReport(), Options{MaxRows: 3})[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"type":"header","text":{"type":"plain_text","text":"reclaim dry-run"`, `{"type":"section","text":{"type":"mrkdwn","text":"*`,
		`{"type":"divider"}`, `{"type":"context","elements":[{"type":"mrkdwn","text":"reclaim dry-run at 2026-11-23T13:00:00Z`} {
		if !strings.Contains(s, want) {
			t.Errorf("payload lacks %s", want)
		}
	}
}

func TestSmallReportHeadline(t *testing.T) {
	p := &engine.Plan{Decisions: []engine.Decision{{Kind: "k8s-pvc", ID: "c/ns/pvc-1", Action: engine.Mark}}}
	ms := Build(report.New(p, nil, false), Options{})
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "nothing would be deleted") {
		t.Fatalf("%+v", ms)
	}
	b, _ := json.Marshal(ms[0])
	if !strings.Contains(string(b), "*PVCs: 0 would be deleted*\\n1 more marked") {
		t.Fatalf("%s", b)
	}
}

// A report that cannot be posted is spooled, and the next delivery posts it
// first, then its own: a failed delivery never loses a report.
func TestFailedReportIsSpooledAndPostedNext(t *testing.T) {
	rc, url := newReceiver(t, answer{status: 404, body: "channel_not_found"})
	tg := &Target{TargetName: "ops", Client: &Client{URL: url, Sleep: (&waits{}).sleep}, Spool: t.TempDir()}
	first := report.New(&engine.Plan{Decisions: []engine.Decision{{Kind: "k8s-pvc", ID: "c/ns/first", Action: engine.Mark}}}, nil, false)
	err := tg.Deliver(context.Background(), first)
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") || !strings.Contains(err.Error(), "spooled") || strings.Contains(err.Error(), "s3cr3tt0ken") {
		t.Fatalf("first delivery: %v", err)
	}
	if files, _ := tg.Spooled(); len(files) != 1 {
		t.Fatalf("spool holds %d reports, want 1", len(files))
	}
	second := report.New(&engine.Plan{Decisions: []engine.Decision{{Kind: "k8s-pvc", ID: "c/ns/second", Action: engine.Delete}}}, nil, false)
	if err := tg.Deliver(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	posts := rc.posts()
	if len(posts) != 3 { // the failed one, then the spooled report, then the new one
		t.Fatalf("%d posts, want 3", len(posts))
	}
	want, _ := json.Marshal(Build(first, Options{})[0])
	if !bytes.Equal(posts[1], want) {
		t.Errorf("second post is not the spooled report:\n%s\nwant\n%s", posts[1], want)
	}
	if files, _ := tg.Spooled(); len(files) != 0 {
		t.Errorf("spool still holds %v", files)
	}
}

// The most urgent first: the notification text and the first block lead
// with what runs out soonest (the subnet, 90 minutes away, before the quota,
// a day away, whatever order the kinds came in), then what the run deletes;
// the warnings come before the fields and the deletions.
func TestMostUrgentLeads(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	soon, later := now.Add(90*time.Minute), now.Add(27*time.Hour)
	p := &engine.Plan{GeneratedAt: now,
		Decisions: []engine.Decision{{Kind: "k8s-job", ID: "clusters/a/namespaces/n/jobs/j", Action: engine.Delete, Frees: amount.Free(1, finished.Addresses)}},
		Warnings: []layout.Warning{
			{Kind: "ec2-interface", Text: "subnet-1 (us-east-1a) is 92% used: 326 of 4091 addresses free.", RunsOutAt: &soon},
			{Kind: "gce-disk", Text: "p r1 SSD_TOTAL_GB is 97.0% used (1455 of 1500 GB), 77.0% after this plan.", RunsOutAt: &later},
		},
		Blocked: []string{"cluster b could not be read"},
	}
	ms := Build(report.New(p, nil, false), Options{Fleet: "prod", Nouns: map[string]string{"k8s-job": "Jobs"}})
	if want := "reclaim dry-run · prod: subnet-1 (us-east-1a) is 92% used — runs out in 1h30m; 1 Job (1 subnet address) would be deleted"; !strings.HasPrefix(ms[0].Text, want) {
		t.Fatalf("text %q, want it to start with %q", ms[0].Text, want)
	}
	b, _ := json.Marshal(ms[0].Blocks)
	body := string(b)
	order := []string{":rotating_light: *subnet-1", "1 Job (1 subnet address) would be deleted", "most urgent", "[runs out in 1h30m] subnet-1", "[runs out in 27h] p r1 SSD_TOTAL_GB",
		"held back", "cluster b could not be read"}
	at := 0
	for _, w := range order {
		i := strings.Index(body[at:], w)
		if i < 0 {
			t.Fatalf("blocks lack %q after the previous part:\n%s", w, body)
		}
		at += i
	}
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// The messages of a fleet with warnings of different urgency and three
// owners, and of one owner's slice, against golden files: what Slack is
// posted, block by block. Rewrite with go test ./notify/slack -update.
func TestGoldenMessages(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	soon, later := now.Add(90*time.Minute), now.Add(27*time.Hour)
	p := &engine.Plan{GeneratedAt: now, Currency: "USD",
		Sources: []engine.Source{{Kind: "cluster", Name: "a", Complete: true}, {Kind: "cluster", Name: "b", Complete: false}},
		Decisions: []engine.Decision{
			{Kind: "k8s-job", ID: "clusters/a/namespaces/etl/jobs/nightly", Name: "nightly", Action: engine.Delete, Owner: "data-eng", Frees: amount.Free(1, finished.Addresses)},
			{Kind: "gce-disk", ID: "projects/p/zones/z/disks/scratch", Name: "scratch", Action: engine.Delete, Owner: "ml", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 200, Unit: gcepd.GB}}, Cost: 34}},
			{Kind: "gce-disk", ID: "projects/p/zones/z/disks/cache", Name: "cache", Action: engine.Mark, Owner: "web", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 50, Unit: gcepd.GB}}, Cost: 5}},
			{Kind: "gce-disk", ID: "projects/p/zones/z/disks/old", Name: "old", Action: engine.Mark, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 10, Unit: gcepd.GB}}, Cost: 1.7}},
		},
		Warnings: []layout.Warning{
			{Kind: "ec2-interface", Text: "subnet-1 (us-east-1a) is 92% used: 326 of 4091 addresses free.", RunsOutAt: &soon},
			{Kind: "gce-disk", Text: "p r1 SSD_TOTAL_GB is 97.0% used (1455 of 1500 GB), 77.0% after this plan.", RunsOutAt: &later},
		},
		Blocked: []string{"cluster b could not be read"}, Incomplete: true,
	}
	rep := report.New(p, nil, false)
	opt := Options{Fleet: "prod", MaxRows: 5, Nouns: map[string]string{"k8s-job": "Jobs", "gce-disk": "disks"}}
	fleet := Build(rep, opt)
	opt.Fleet = "prod · ml"
	slice := Build(report.ForOwners(rep, []string{"ml"}), opt)
	got, err := json.MarshalIndent(map[string][]Message{"fleet": fleet, "ml": slice}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "messages.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("messages differ from %s (go test ./notify/slack -update rewrites it):\n%s", path, got)
	}
}
