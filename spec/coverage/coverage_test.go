package coverage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/catalog"
)

// docsDir is the stored documents' directory in the shared tree
// (catalog.SharedDir: beside the checkout, or $APICONFORM_SHARED).
func docsDir(t *testing.T) string {
	t.Helper()
	shared := catalog.SharedDir()
	if shared == "" {
		t.Skip("the stored documents are not beside this checkout (../shared/docs); set APICONFORM_SHARED")
	}
	return filepath.Join(shared, "docs")
}

var (
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*(\{#[^}]*\})?\s*$`)
	tocEntry   = regexp.MustCompile(`^- (.+)$`)
	markupRune = strings.NewReplacer("**", "", "`", "")
)

// headings lists the section headings of one stored document as the map
// names them (markup and anchors removed). The English conventions document
// (001) lost its heading markup: its headings are taken from the map and
// checked to stand alone on a line. 004 lost it too: its sections are its
// own table of contents.
func headings(t *testing.T, doc, text string, listed []string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	switch {
	case strings.HasPrefix(doc, "001_"):
		for _, title := range listed {
			if !slices.Contains(lines, title) {
				t.Errorf("%s: %q is not a heading line of the document", doc, title)
			}
			out = append(out, title)
		}
	case strings.HasPrefix(doc, "004_"):
		in := false
		for _, l := range lines {
			if strings.TrimSpace(l) == "目录" {
				in = true
				continue
			}
			if m := tocEntry.FindStringSubmatch(l); in && m != nil {
				out = append(out, strings.TrimSpace(m[1]))
			} else if in && len(out) > 0 {
				break
			}
		}
	default:
		for _, l := range lines {
			if m := mdHeading.FindStringSubmatch(l); m != nil {
				out = append(out, markupRune.Replace(m[1]))
			}
		}
	}
	return out
}

func TestMapListsEverySectionOfEveryDocument(t *testing.T) {
	dir := docsDir(t)
	m, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	byDoc := map[string][]string{}
	for _, s := range m.Sections {
		byDoc[s.Doc] = append(byDoc[s.Doc], s.Title)
	}
	for _, doc := range catalog.KnownDocs {
		raw, err := os.ReadFile(filepath.Join(dir, doc))
		if err != nil {
			t.Fatal(err)
		}
		got := headings(t, doc, string(raw), byDoc[doc])
		if len(got) == 0 {
			t.Errorf("%s: no headings found", doc)
		}
		if !slices.Equal(got, byDoc[doc]) {
			t.Errorf("%s: the map's sections differ from the document's headings\n map: %q\n doc: %q", doc, byDoc[doc], got)
		}
	}
}

func TestBuildJudgesEverySection(t *testing.T) {
	m, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	totals := m.Totals()
	if totals[Covered] == 0 || len(m.Sections) != totals[Covered]+totals[Static]+totals[Untestable]+totals[Gap] {
		t.Fatalf("totals %v over %d sections", totals, len(m.Sections))
	}
	var docs []string
	for _, d := range m.Documents {
		docs = append(docs, d.Doc)
	}
	if !slices.Equal(docs, catalog.KnownDocs) {
		t.Errorf("documents %v, want %v", docs, catalog.KnownDocs)
	}
	for _, s := range m.Sections {
		if s.Status == Covered && len(s.Requirements) == 0 {
			t.Errorf("%s § %s: covered without requirements", s.Doc, s.Title)
		}
	}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name    string
		s       Section
		want    Status
		wantErr bool
	}{
		{"requirements only", Section{Requirements: []string{"A-B"}}, Covered, false},
		{"requirements and a reason", Section{Requirements: []string{"A-B"}, Untestable: "x"}, Covered, true},
		{"requirements and a gap", Section{Requirements: []string{"A-B"}, Gap: "x"}, Covered, true},
		{"nothing", Section{}, Gap, true},
		{"static", Section{Static: []string{"list-kind"}}, Static, false},
		{"untestable", Section{Untestable: "x"}, Untestable, false},
		{"gap", Section{Gap: "issue"}, Gap, false},
		{"two reasons", Section{Untestable: "x", Gap: "y"}, Untestable, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, msg := judge(c.s)
			if got != c.want || (msg != "") != c.wantErr {
				t.Fatalf("judge = %s, %q; want %s, error %v", got, msg, c.want, c.wantErr)
			}
		})
	}
}

// The map's own consistency errors are reported, not hidden: a requirement
// citing an unlisted section and an unknown rule both fail Build.
func TestBuildRejectsMalformedMaps(t *testing.T) {
	saved := sectionsYAML
	defer func() { sectionsYAML = saved }()
	for name, c := range map[string]struct{ data, want string }{
		"unknown rule":   {"- doc: 001_1514b8991cf2916c.txt\n  title: T\n  sections:\n  - title: Units\n    static: [no-such-rule]\n", `no lint or compat rule "no-such-rule"`},
		"unlisted cited": {"- doc: 001_1514b8991cf2916c.txt\n  title: T\n  sections:\n  - title: Units\n    static: [duration-seconds]\n", "which the coverage map does not list"},
		"bad sameAs":     {"- doc: 003_c242e18d62eea135.txt\n  title: T\n  sections:\n  - title: x\n    sameAs: [Nowhere]\n", `sameAs "Nowhere"`},
		"unknown field":  {"- doc: 001_1514b8991cf2916c.txt\n  title: T\n  sections:\n  - title: Units\n    becauz: x\n", "becauz"},
		"listed twice":   {"- doc: 001_1514b8991cf2916c.txt\n  title: T\n  sections:\n  - title: Units\n    gap: x\n  - title: Units\n    gap: x\n", "listed twice"},
		"no title":       {"- doc: 001_1514b8991cf2916c.txt\n  sections:\n  - title: Units\n    static: [duration-seconds]\n", "001_1514b8991cf2916c.txt: no title"},
		"neither":        {"- doc: 001_1514b8991cf2916c.txt\n  title: T\n  sections:\n  - title: Units\n", "has neither requirements nor a reason"},
	} {
		t.Run(name, func(t *testing.T) {
			sectionsYAML = []byte(c.data)
			_, err := Build()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build = %v, want an error containing %q", err, c.want)
			}
		})
	}
}
