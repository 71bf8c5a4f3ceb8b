package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/internal/chromium"
	"github.com/apiconform/apiconform/reports/sample"
)

// domRow is a matrix row as the browser left it.
type domRow struct {
	id       string
	outcomes string
	level    string
	hidden   bool
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, c string) bool {
	v, _ := attr(n, "class")
	for _, f := range strings.Fields(v) {
		if f == c {
			return true
		}
	}
	return false
}

// loadInBrowser renders the comparison report to a file, opens it in
// headless Chromium with the fragment, and returns the DOM after the JS ran.
func loadInBrowser(t *testing.T, fragment string) (rows []domRow, body *html.Node, root *html.Node) {
	return loadReportInBrowser(t, multiReport(), fragment)
}

// firstScreen is the window the failures must start in: a laptop's 1280×800.
const firstScreenW, firstScreenH = 1280, 800

func loadReportInBrowser(t *testing.T, rep *reports.Report, fragment string) (rows []domRow, body *html.Node, root *html.Node) {
	t.Helper()
	if _, err := chromium.Find(); errors.Is(err, chromium.ErrNotFound) {
		t.Skip(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := chromium.FileURL(page, fragment)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := chromium.DumpDOMSize(ctx, u, firstScreenW, firstScreenH)
	if err != nil {
		t.Fatal(err)
	}
	root, err = html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if n.Data == "body" {
				body = n
			}
			if n.Data == "tr" && hasClass(n, "req") {
				id, _ := attr(n, "id")
				out, _ := attr(n, "data-outcomes")
				lvl, _ := attr(n, "data-level")
				_, hidden := attr(n, "hidden")
				rows = append(rows, domRow{id: strings.TrimPrefix(id, "req-"), outcomes: out, level: lvl, hidden: hidden})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if body == nil {
		t.Fatal("no <body> in the dumped DOM")
	}
	if v, _ := attr(body, "data-ready"); v != "true" {
		t.Fatal("the report's script did not run (body lacks data-ready)")
	}
	return rows, body, root
}

func TestHTMLInChromium(t *testing.T) {
	rep := multiReport()
	var want []string
	for _, g := range rep.Areas {
		for _, r := range g.Rows {
			want = append(want, r.Requirement.ID)
		}
	}

	t.Run("all rows shown", func(t *testing.T) {
		rows, body, _ := loadInBrowser(t, "")
		if len(rows) != len(want) {
			t.Fatalf("%d matrix rows in the DOM, want %d", len(rows), len(want))
		}
		for i, r := range rows {
			if r.id != want[i] || r.hidden {
				t.Errorf("row %d = %+v, want visible %s", i, r, want[i])
			}
		}
		if f, _ := attr(body, "data-filter"); f != "" {
			t.Errorf("unfiltered page has filter %q", f)
		}
	})

	t.Run("fragment filter", func(t *testing.T) {
		rows, body, _ := loadInBrowser(t, "outcome=fail&level=MUST")
		if f, _ := attr(body, "data-filter"); f != "level=MUST&outcome=fail" {
			t.Errorf("applied filter %q", f)
		}
		visible := 0
		for _, r := range rows {
			match := r.level == "MUST" && strings.Contains(" "+r.outcomes+" ", " fail ")
			if r.hidden == match {
				t.Errorf("row %s (level %s, outcomes %q): hidden=%v", r.id, r.level, r.outcomes, r.hidden)
			}
			if !r.hidden {
				visible++
			}
		}
		// The fixture has exactly two MUST requirements failing somewhere.
		if visible != 2 {
			t.Errorf("%d rows visible, want 2", visible)
		}
	})

	t.Run("expand failures", func(t *testing.T) {
		_, _, root := loadInBrowser(t, "expand=1")
		details := 0
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "tr" && hasClass(n, "detail") {
				details++
				if _, hidden := attr(n, "hidden"); hidden {
					id, _ := attr(n, "id")
					t.Errorf("failure detail %s still hidden after expand=1", id)
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(root)
		if details != len(rep.Failures) {
			t.Errorf("%d failure detail rows, want %d", details, len(rep.Failures))
		}
	})
}

// TestHTMLCoverageInChromium: the coverage section is collapsed by
// default, and a link to a failure (as the coverage tables' failed
// requirements make) opens that failure.
func TestHTMLCoverageInChromium(t *testing.T) {
	_, _, root := loadInBrowser(t, "failure-1")
	opened := map[string]bool{}
	links := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "details" {
			id, _ := attr(n, "id")
			_, open := attr(n, "open")
			if hasClass(n, "coverage") {
				id = "coverage"
			}
			opened[id] = open
		}
		if n.Type == html.ElementNode && n.Data == "a" {
			if href, _ := attr(n, "href"); href == "#failure-1" && n.Parent != nil && hasClass(n.Parent, "cov-req") {
				links++
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if open, ok := opened["coverage"]; !ok || open {
		t.Errorf("coverage section: present %v, open %v; want present and collapsed", ok, open)
	}
	if !opened["failure-1"] {
		t.Error("report.html#failure-1 left the failure collapsed")
	}
	if links == 0 {
		t.Error("no coverage table links its failed requirement to #failure-1")
	}
}

// manyFailures is the sample run with fifteen failing specs and an error,
// the case the reader met.
func manyFailures() *reports.Report {
	r := sample.Erroring()
	base := r.Specs[5] // the failing paging spec, with its exchanges
	for i := 0; i < 14; i++ {
		s := base
		s.Name = fmt.Sprintf("%s (variant %d)", base.Name, i+1)
		r.Specs = append(r.Specs, s)
	}
	return reports.Build(sample.Catalogue(), r)
}

// TestHTMLFailuresFirst: in a headless browser the failures (and errors)
// start on the first screen, above the matrix, with a jump list entry per
// failure; the Chinese source quote shows in English with its upstream
// link, and the original is hidden when no font can draw it.
func TestHTMLFailuresFirst(t *testing.T) {
	rep := manyFailures()
	_, body, root := loadReportInBrowser(t, rep, "")
	top, _ := attr(body, "data-failures-top")
	height, _ := attr(body, "data-viewport-height")
	topN, err1 := strconv.Atoi(top)
	heightN, err2 := strconv.Atoi(height)
	if err1 != nil || err2 != nil || heightN == 0 {
		t.Fatalf("the page did not measure its failures section: top %q, viewport %q", top, height)
	}
	if topN >= heightN {
		t.Errorf("the failures start at %dpx, below the first screen (%dpx)", topN, heightN)
	}
	t.Logf("failures start at %dpx of a %dpx first screen", topN, heightN)

	var jump, order []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if id, _ := attr(n, "id"); id == "failures" || id == "matrix" {
				order = append(order, id)
			}
			if n.Data == "li" && n.Parent != nil {
				if id, _ := attr(n.Parent, "id"); id == "jump" {
					jump = append(jump, textOf(n))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if strings.Join(order, ",") != "failures,matrix" {
		t.Errorf("sections in order %v, want the failures before the matrix", order)
	}
	if want := len(rep.Failures) + len(rep.Errors); len(jump) != want {
		t.Errorf("%d jump-list entries, want %d", len(jump), want)
	}
	for _, j := range jump {
		if !strings.Contains(j, "PAGE-CONTINUE-CONSISTENT: ") && !strings.Contains(j, "WATCH-RV-EXACT: error: ") {
			t.Errorf("jump-list entry %q is not a verdict line", j)
		}
	}

	cjk, _ := attr(body, "data-cjk")
	if cjk != "rendered" && cjk != "missing" {
		t.Fatalf("data-cjk = %q: the font check did not run", cjk)
	}
	htmlEl := root.FirstChild
	for htmlEl != nil && (htmlEl.Type != html.ElementNode || htmlEl.Data != "html") {
		htmlEl = htmlEl.NextSibling
	}
	if htmlEl != nil && (cjk == "missing") != hasClass(htmlEl, "no-cjk") {
		t.Errorf("data-cjk %s but <html> class no-cjk is %v", cjk, hasClass(htmlEl, "no-cjk"))
	}
	page := textOf(root)
	for _, want := range []string{"On compatibility: “It must be possible to round-trip", "必须能够往返更改"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLScreenshot takes the first screen of the many-failures page
// (1280×800) as a PNG, the picture the README describes.
func TestHTMLScreenshot(t *testing.T) {
	if _, err := chromium.Find(); errors.Is(err, chromium.ErrNotFound) {
		t.Skip(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, manyFailures()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := chromium.FileURL(page, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	png := filepath.Join(dir, "first-screen.png")
	if err := chromium.Screenshot(ctx, u, png, firstScreenW, firstScreenH); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("APICONFORM_SCREENSHOT_OUT"); out != "" {
		data, _ := os.ReadFile(png)
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// The page must be self-contained: no external src/href, stylesheet or fetch.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, multiReport()); err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				// Links a reader follows (a document's upstream page) are fine; nothing is loaded from outside.
				link := n.Data == "a" && a.Key == "href" && strings.HasPrefix(a.Val, "https://")
				if (a.Key == "src" || a.Key == "href" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") && !link {
					t.Errorf("<%s %s=%q> points outside the page", n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "link" || n.Data == "iframe" || n.Data == "img" {
				t.Errorf("unexpected <%s> element", n.Data)
			}
			if n.Data == "script" && n.FirstChild != nil && (strings.Contains(n.FirstChild.Data, "fetch(") || strings.Contains(n.FirstChild.Data, "XMLHttpRequest")) {
				t.Error("script performs network requests")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
}
