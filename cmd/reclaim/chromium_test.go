package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// measureBreaks is run by the browser after layout: every word (a run of
// non-space characters) laid out on more than one line although it would
// fit on one line of its element is a word broken inside a token, as
// `word-break: break-all` did ("DELET/E", "us-east/-1a"). A token longer
// than its element may wrap: that is what overflow-wrap allows.
const measureBreaks = `<script>
window.addEventListener('load', function () { // once the charts have loaded
  var broken = [], words = 0;
  var walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (var n = walk.nextNode(); n; n = walk.nextNode()) {
    var el = n.parentElement, re = /\S+/g, m;
    if (!el || el.closest('script')) continue;
    var cs = getComputedStyle(el);
    var room = el.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    while ((m = re.exec(n.textContent))) {
      words++;
      var r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      var rects = r.getClientRects(), lines = {}, width = 0;
      for (var i = 0; i < rects.length; i++) {
        if (rects[i].width > 0) { lines[Math.round(rects[i].top)] = 1; width += rects[i].width; }
      }
      if (Object.keys(lines).length > 1 && width < room - 1) broken.push(m[0]);
    }
  }
  // What runs off the right edge of the window, outside a box that scrolls
  // sideways on its own.
  var vw = document.documentElement.clientWidth, off = [], scrolls = 0;
  var boxes = document.querySelectorAll('body *');
  for (var k = 0; k < boxes.length; k++) {
    var e = boxes[k], inBox = false;
    for (var a = e.parentElement; a && !inBox; a = a.parentElement) {
      var ox = getComputedStyle(a).overflowX;
      inBox = ox === 'auto' || ox === 'scroll';
    }
    if (!inBox && getComputedStyle(e).overflowX === 'auto' && e.scrollWidth > e.clientWidth) scrolls++;
    if (!inBox && e.getBoundingClientRect().right > vw + 1) off.push(e.tagName + ' ' + e.textContent.trim().slice(0, 60));
  }
  // The charts: drawn (loaded) and how wide.
  var imgs = [];
  document.querySelectorAll('img').forEach(function (im) { imgs.push({loaded: im.complete && im.naturalWidth > 0, width: Math.round(im.getBoundingClientRect().width)}); });
  var out = document.createElement('pre');
  out.id = 'reclaim-measure';
  out.textContent = JSON.stringify({words: words, broken: broken, width: document.documentElement.scrollWidth, viewport: vw, off: off, scrolls: scrolls, images: imgs});
  document.body.appendChild(out);
});
</script>`

// The report email, rendered by a real browser (headless Chromium, Debian's
// package) 600 px wide, as a phone's mail client shows it: it fits the
// width (a wide table scrolls inside its own box, so the headline and the
// warnings stay in view) and no word is broken inside a token. Needs
// chromium (make testdeps installs it); CI fails without it, a developer's
// machine skips.
func TestEmailWordsStayWholeInChromium(t *testing.T) {
	browser := chromium(t)
	page, err := os.ReadFile(filepath.Join("testdata", "demo-report.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(string(page), "</body>", measureBreaks+"</body>", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "email.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	// The charts beside it, as reclaim demo --email-files writes them.
	charts, _ := filepath.Glob(filepath.Join("testdata", "demo-report-chart-*.png"))
	for _, c := range charts {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(c)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--hide-scrollbars", "--window-size=600,4000", "--virtual-time-budget=5000", "--dump-dom", "file://"+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	m := regexp.MustCompile(`<pre id="reclaim-measure">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page did not report its measure:\n%.2000s", out)
	}
	var got struct {
		Words           int
		Broken          []string
		Width, Viewport int
		Off             []string
		Scrolls         int
		Images          []struct {
			Loaded bool
			Width  int
		}
	}
	if err := json.Unmarshal([]byte(unescapeHTML(string(m[1]))), &got); err != nil {
		t.Fatalf("%v: %s", err, m[1])
	}
	if got.Words < 500 {
		t.Fatalf("only %d words measured: the page was not laid out", got.Words)
	}
	if got.Viewport != 600 {
		t.Fatalf("the window is %d px wide, want 600", got.Viewport)
	}
	if got.Width > got.Viewport || len(got.Off) > 0 {
		t.Errorf("the page is %d px wide at %d px: %d elements run off the right edge, e.g. %q", got.Width, got.Viewport, len(got.Off), got.Off[:min(5, len(got.Off))])
	}
	if got.Scrolls == 0 {
		t.Error("no table scrolls in its own box: the demo's report should have one wider than a phone")
	}
	if len(got.Images) == 0 || len(got.Images) != len(charts) {
		t.Errorf("%d images on the page, %d charts in testdata", len(got.Images), len(charts))
	}
	for i, im := range got.Images {
		if !im.Loaded || im.Width == 0 || im.Width > got.Viewport {
			t.Errorf("chart %d: loaded %v, %d px wide at %d px", i+1, im.Loaded, im.Width, got.Viewport)
		}
	}
	if len(got.Broken) > 0 {
		t.Errorf("%d of %d words broken inside at 600 px, e.g. %q", len(got.Broken), got.Words, got.Broken[:min(10, len(got.Broken))])
	}
}

// chromium is the headless browser's path: CI fails without it, a
// developer's machine skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: make testdeps installs it")
	}
	t.Skip("chromium is not installed (make testdeps installs it)")
	return ""
}

func unescapeHTML(s string) string {
	return strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'", "&amp;", "&").Replace(s)
}
