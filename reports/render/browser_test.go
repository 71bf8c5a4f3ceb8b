package render

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/apiconform/apiconform/reports/internal/chromium"
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
	t.Helper()
	if _, err := chromium.Find(); errors.Is(err, chromium.ErrNotFound) {
		t.Skip(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, multiReport()); err != nil {
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
	dom, err := chromium.DumpDOM(ctx, u)
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
				if (a.Key == "src" || a.Key == "href" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") {
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
