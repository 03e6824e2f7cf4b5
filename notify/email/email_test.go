package email

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 11, 23, 17, 10, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

// fixedReport is a dry-run of two kinds with a headroom warning, a held-back
// note, deletions, marks (one due before the next run, one after) and a keep.
func fixedReport() *report.Report {
	// Three owners (notify.routes), and pvc-4 of none.
	p := &engine.Plan{Version: engine.SchemaVersion, GeneratedAt: t0, Currency: "USD",
		Sources: []engine.Source{{Kind: "cluster", Name: "prod-a", Complete: true, Items: 3}, {Kind: "cluster", Name: "prod-b", Complete: false, Problems: []string{"timeout"}}},
		Decisions: []engine.Decision{
			{Kind: "gce-disk", ID: "projects/p/zones/z-a/disks/pvc-1", Name: "pvc-1", Action: engine.Delete, Owner: "data-eng", Reason: "orphan since 2026-11-23T08:00:00Z (grace 6h elapsed)", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 100, Unit: gcepd.GB}}, Cost: 17}, DeletableAfter: at(-3 * time.Hour)},
			{Kind: "gce-disk", ID: "projects/p/zones/z-a/disks/pvc-2", Name: "pvc-2", Action: engine.Delete, Owner: "ml", Reason: "orphan <b>since</b> & more", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 200, Unit: gcepd.GB}}, Cost: 20}, DeletableAfter: at(-2 * time.Hour)},
			{Kind: "gce-disk", ID: "projects/p/zones/z-b/disks/pvc-3", Name: "pvc-3", Action: engine.Mark, Owner: "data-eng", Reason: "orphan, deletable after 17:40", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 50, Unit: gcepd.GB}}, Cost: 5}, DeletableAfter: at(30 * time.Minute)},
			{Kind: "gce-disk", ID: "projects/p/zones/z-b/disks/pvc-4", Name: "pvc-4", Action: engine.Mark, Reason: "orphan, deletable tomorrow", Frees: amount.Free(10, gcepd.GB), DeletableAfter: at(20 * time.Hour)},
			{Kind: "gce-disk", ID: "projects/p/zones/z-b/disks/keep", Name: "keep", Action: engine.Keep, Reason: "attached"},
			{Kind: "ecr-image", ID: "ecr:1/r/shop@sha256:aa", Name: "shop", Action: engine.Delete, Owner: "web", Reason: "trim", Frees: amount.Free(300<<20, ecrimage.Bytes), DeletableAfter: at(-time.Hour)},
			{Kind: "ecr-image", ID: "ecr:1/r/shop@sha256:bb", Name: "shop", Action: engine.Delete, Owner: "web", Reason: "trim", Frees: amount.Free(200<<20, ecrimage.Bytes), DeletableAfter: at(-time.Hour)},
			{Kind: "ecr-image", ID: "ecr:1/r/shop@sha256:cc", Name: "shop", Action: engine.Delete, Owner: "web", Reason: "trim", Frees: amount.Free(100<<20, ecrimage.Bytes), DeletableAfter: at(-time.Hour)},
		},
		Sections: []layout.Section{{Key: "headroom", Title: "QUOTA HEADROOM", Place: layout.Overview, Blocks: []layout.Block{{
			Header: []string{"REGION", "METRIC", "USED"}, Rows: [][]string{{"r1", "SSD_TOTAL_GB", "97.0%"}, {"r1", "DISKS_TOTAL_GB", "2.4%"}},
			Lines: []string{"  ! p r1 SSD_TOTAL_GB is 97.0% used (1455 of 1500 GB), 77.0% after this plan.", "  ! p r1 SSD_TOTAL_GB grows 40 GB a day: full around 2026-11-24 20:00 UTC at this rate."}}}},
			{Title: "GCE DISKS", Place: layout.Details}},
		// As the engine orders them: the subnet runs out first.
		Warnings: []layout.Warning{
			{Kind: "ec2-interface", Text: "subnet-1 (us-east-1a) is 92% used: 326 of 4091 addresses free.", RunsOutAt: at(90 * time.Minute)},
			{Kind: "gce-disk", Text: "p r1 SSD_TOTAL_GB is 97.0% used (1455 of 1500 GB), 77.0% after this plan.", RunsOutAt: at(26*time.Hour + 50*time.Minute)},
			{Kind: "gce-disk", Text: "p r1 SSD_TOTAL_GB grows 40 GB a day: full around 2026-11-24 20:00 UTC at this rate.", RunsOutAt: at(26*time.Hour + 50*time.Minute)},
		},
		Summaries:  []string{"disks delete 2, mark 2", "images delete 3 (600 MB)"},
		Blocked:    []string{"cluster prod-b could not be read completely: no disk it could reference is deleted"},
		Incomplete: true,
	}
	rep := report.New(p, nil, false)
	return rep
}

func testOptions() Options {
	return Options{Fleet: "prod", MaxRows: 2, Nouns: map[string]string{"gce-disk": "disks", "ecr-image": "images"},
		OptOut:  map[string]string{"gce-disk": "set the label reclaim-protect on the disk", "ecr-image": "tag the repository reclaim.dev/protect=true"},
		NextRun: t0.Add(50 * time.Minute)}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./notify/email -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./notify/email -update rewrites it); got:\n%s", name, got)
	}
}

// The bodies of a fixed report, against golden files: the order (summary,
// warnings, new, next run, details), the cuts at maxRows and the escaping.
func TestGoldenBodies(t *testing.T) {
	prev := notify.Previous{Known: true, At: t0.Add(-time.Hour), Keys: map[string]bool{
		"gce-disk projects/p/zones/z-a/disks/pvc-1 delete": true, "ecr-image ecr:1/r/shop@sha256:aa delete": true, "gce-disk gone delete": true}}
	c, err := Render(fixedReport(), prev, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", c.Text)
	golden(t, "report.html", c.HTML)
	// data-eng's slice: its two disks, no fleet warnings or quota table.
	opt := testOptions()
	opt.Fleet = "prod · data-eng"
	slice, err := Render(report.ForOwners(fixedReport(), []string{"data-eng"}), notify.Previous{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report-data-eng.txt", slice.Text)
	// The most urgent first: the subnet, 1h30m from full, before the
	// quota (27h) and what the run deletes.
	want := "[reclaim dry-run] prod: subnet-1 (us-east-1a) is 92% used — runs out in 1h30m; 2 disks (300 GB) and 3 images (629 MB) would be deleted (+4 more warnings)"
	if c.Subject != want {
		t.Errorf("subject %q\nwant    %q", c.Subject, want)
	}
}

func TestBodiesReadTheReport(t *testing.T) {
	opt := testOptions()
	opt.MaxRows = 10
	c, err := Render(fixedReport(), notify.Previous{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	txt := c.Text
	order := []string{"! most urgent (3)", "[runs out in 1h30m] subnet-1", "[runs out in 27h] p r1 SSD_TOTAL_GB is 97.0% used", "SSD_TOTAL_GB grows 40 GB a day",
		"! held back", "incomplete sources: cluster prod-b", "== SUMMARY ==", "== NEW SINCE THE PREVIOUS REPORT ==", "first report",
		"== DELETED AT THE NEXT RUN UNLESS PROTECTED ==", "Next run: 2026-11-23 18:00:00 UTC", "pvc-3", "To keep one:", "set the label reclaim-protect on the disk", "== DETAILS =="}
	at := 0
	for _, w := range order {
		i := strings.Index(txt[at:], w)
		if i < 0 {
			t.Fatalf("text lacks %q after the previous part:\n%s", w, txt)
		}
		at += i
	}
	// A warning the plan lists is not repeated from its section's "!" lines.
	if n := strings.Count(txt, "grows 40 GB a day"); n != 1 {
		t.Errorf("the quota's growth warning appears %d times, want once:\n%s", n, txt)
	}
	// pvc-4's grace ends after the next run: not in the next-run list.
	next := txt[strings.Index(txt, "== DELETED AT THE NEXT RUN"):strings.Index(txt, "== DETAILS ==")]
	if strings.Contains(next, "pvc-4") {
		t.Errorf("pvc-4 is not due at the next run:\n%s", next)
	}
	if strings.Contains(txt, "more (see report.json)") {
		t.Errorf("cut below maxRows:\n%s", txt)
	}
	// Cut at maxRows (2): disks have 4 rows in the details, images 3.
	cut, err := Render(fixedReport(), notify.Previous{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cut.Text, "+2 more") || !strings.Contains(cut.Text, "+1 more") {
		t.Errorf("no +N more:\n%s", cut.Text)
	}
	doc, err := html.Parse(strings.NewReader(c.HTML))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "img" || n.Data == "style" || n.Data == "b") {
			bad = append(bad, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(bad) > 0 {
		t.Errorf("HTML has elements %v (a reason's <b> must be escaped)", bad)
	}
}

// The message is multipart/mixed: a multipart/alternative (text, HTML) and
// report.json.
func TestMessageStructure(t *testing.T) {
	c, err := Render(fixedReport(), notify.Previous{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{TargetName: "ops", Server: Server{From: "reclaim@example.com", To: []string{"a@example.com"}}}
	raw, err := tg.Message(c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if mt != "multipart/mixed" {
		t.Fatalf("Content-Type %s", mt)
	}
	var kinds []string
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		kinds = append(kinds, pt+":"+p.FileName())
		if pt == "multipart/alternative" {
			ar := multipart.NewReader(p, pp["boundary"])
			for {
				ap, err := ar.NextPart()
				if err == io.EOF {
					break
				}
				at, _, _ := mime.ParseMediaType(ap.Header.Get("Content-Type"))
				kinds = append(kinds, " "+at)
			}
		}
	}
	if got := strings.Join(kinds, ","); got != "multipart/alternative:, text/plain, text/html,application/json:report.json" {
		t.Errorf("parts %s", got)
	}
}

// A server that cannot be reached: the message is spooled, the error says
// so; a later delivery sends the spooled one first, then removes it.
func TestUnreachableServerSpools(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	spool := t.TempDir()
	tg := &Target{TargetName: "ops", Spool: spool, Options: testOptions(),
		Server: Server{Host: "127.0.0.1", Port: port, TLS: "none", From: "reclaim@example.com", To: []string{"a@example.com"}, Timeout: 2 * time.Second}}
	err = tg.DeliverSince(context.Background(), fixedReport(), notify.Previous{})
	if err == nil || !strings.Contains(err.Error(), "spooled to "+filepath.Join(spool, "ops")) {
		t.Fatalf("err %v", err)
	}
	err = tg.DeliverSince(context.Background(), fixedReport(), notify.Previous{})
	if err == nil || !strings.Contains(err.Error(), "1 spooled messages still unsent") {
		t.Fatalf("err %v", err)
	}
	files, _ := tg.Spooled()
	if len(files) != 2 {
		t.Fatalf("%d spooled, want 2", len(files))
	}
	raw, _ := os.ReadFile(files[0])
	if m, err := mail.ReadMessage(bytes.NewReader(raw)); err != nil || !strings.Contains(m.Header.Get("Subject"), "reclaim") {
		t.Fatalf("spooled file is not the message: %v", err)
	}
}

// With routes, the fleet's email sums the candidates per owner in its
// summary; a report whose candidates have no owner shows no such table.
func TestBodiesSumPerOwner(t *testing.T) {
	rep := fixedReport()
	for i := range rep.Plan.Decisions {
		rep.Plan.Decisions[i].Owner = ""
	}
	if c, _ := Render(rep, notify.Previous{}, testOptions()); strings.Contains(c.Text, "By owner") {
		t.Fatalf("an owner table without routes:\n%s", c.Text)
	}
	for i := range rep.Plan.Decisions {
		if d := &rep.Plan.Decisions[i]; d.Action != engine.Keep && i%2 == 0 {
			d.Owner = "etl"
		}
	}
	c, err := Render(rep, notify.Previous{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	sum := c.Text[strings.Index(c.Text, "== SUMMARY =="):strings.Index(c.Text, "== NEW SINCE")]
	for _, want := range []string{"By owner (notify.routes)", "OWNER", "etl", "no route: the fleet's"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if !strings.Contains(c.HTML, "By owner (notify.routes)") {
		t.Error("the HTML part has no owner table")
	}
}

// Warnings of pools bring their charts: PNG parts of a multipart/related
// around the bodies, each by the content-id the HTML names, with the
// warning as alt text; the text body says nothing of them.
func TestChartsAreInlineParts(t *testing.T) {
	rep := fixedReport()
	p := rep.Plan
	p.Warnings[0].Pool = &layout.Pool{Used: 3765, Limit: 4091, Frees: 100, Trend: "subnet", Name: "subnet-1 (us-east-1a)", Unit: "addresses"}
	p.Warnings[1].Pool = &layout.Pool{Used: 1455, Limit: 1500, Trend: "ssd", Name: "p r1 SSD_TOTAL_GB", Unit: "GB"}
	p.Warnings[2].Pool = p.Warnings[1].Pool
	p.State.Usage = map[string][]layout.Sample{}
	for h := 48; h >= 0; h-- {
		p.State.Usage["ssd"] = append(p.State.Usage["ssd"], layout.Sample{T: t0.Add(-time.Duration(h) * time.Hour), Usage: 1455 - float64(h)*40/24})
	}
	c, err := Render(rep, notify.Previous{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Render(fixedReport(), notify.Previous{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != plain.Text {
		t.Error("the text body changed with the charts")
	}
	if len(c.Charts) != 2 {
		t.Fatalf("%d charts, want one per kind: 2", len(c.Charts))
	}
	for i, ch := range c.Charts {
		img := fmt.Sprintf(`<img src="cid:%s" alt="%s"`, ChartCID(i+1), html.EscapeString(ch.Alt))
		if !strings.Contains(c.HTML, img) {
			t.Errorf("the HTML lacks %s", img)
		}
	}
	raw, err := (&Target{TargetName: "ops", Server: Server{From: "reclaim@example.com", To: []string{"a@example.com"}}}).Message(c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	var walk func(r io.Reader, contentType, indent string)
	walk = func(r io.Reader, contentType, indent string) {
		mt, params, _ := mime.ParseMediaType(contentType)
		if !strings.HasPrefix(mt, "multipart/") {
			return
		}
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			parts = append(parts, indent+pt+" "+p.Header.Get("Content-Id"))
			walk(p, p.Header.Get("Content-Type"), indent+" ")
		}
	}
	walk(m.Body, m.Header.Get("Content-Type"), "")
	want := "multipart/related |" +
		" multipart/alternative |  text/plain |  text/html |" +
		" image/png <chart-1@reclaim>| image/png <chart-2@reclaim>|" +
		"application/json "
	if got := strings.Join(parts, "|"); got != want {
		t.Errorf("parts\n%s\nwant\n%s", got, want)
	}
}
