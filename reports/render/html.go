package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

var (
	//go:embed assets/report.html.tmpl
	htmlTemplateText string
	//go:embed assets/report.css
	htmlCSS string
	//go:embed assets/report.js
	htmlJS string
)

// htmlTemplate is parsed on first use, not at start-up: every command of
// the binary, apiconform serve among them, paid its 5 ms before main.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"icon":     htmlIcon,
		"word":     statusWord,
		"cellWord": cellWord,
		"add1":     func(i int) int { return i + 1 },
		"outcome":  outcomeWord,
	}).Parse(htmlTemplateText))
})

// The view is the report flattened into what the template lays out.
type htmlView struct {
	Incomplete    []string // INCOMPLETE headlines, shown first
	Problems      string   // "Failures (3) and errors (1)"
	CSS           template.CSS
	JS            template.JS
	Title         string
	Columns       []htmlColumn
	NCols         int // columns in the matrix (requirement + level + results)
	Changes       []reports.Change
	Counts        map[string]int
	AreaNames     []string
	Levels        []string
	Areas         []htmlArea
	LevelRows     []htmlTotalsRow
	Tables        []reports.MarkedTable
	Coverage      *htmlCoverage
	Failures      []htmlFailure
	Skipped       []htmlSkipped
	Observed      []reports.SpecEntry
	ObservedIntro string
	Total         int
	Multi         bool
}

type htmlColumn struct {
	Label, Server, Version, Started, Duration string
	MustPercent, MustText, AllText, Specs     string
	MustClass                                 string
	MustBar                                   int // 0..100 for the gauge width
	Tally                                     reports.Tally
	Caps                                      []htmlCap
}

type htmlCap struct {
	Name string
	On   bool
}

type htmlArea struct {
	Name   string
	Totals []string
	Rows   []htmlRow
}

type htmlTotalsRow struct {
	Name   string
	Totals []string
}

type htmlRow struct {
	ID, Title, Level, Area, Outcomes, Search string
	Section, Quote, Doc                      string
	Original, Lang, URL                      string // a translated document's own words, its language, the upstream page
	Deviation                                string
	Uncatalogued                             bool
	Cells                                    []htmlCell
}

type htmlCell struct {
	Cell     reports.Cell
	Status   reports.Status
	Reason   string
	Counts   string
	DetailID string
	Failures []htmlFailure
}

type htmlFailure struct {
	Anchor   string
	Label    string
	Class    string // fail or error
	Verdict  string // the one-line verdict with requirement IDs
	Spec     result.SpecResult
	Message  string
	Location string
	Decisive *htmlExchange
	Steps    []htmlExchange // the spec's other requests
	Aside    []htmlExchange // setup and teardown
}

type htmlExchange struct {
	Role, Method, URL, Short, Note string
	Status                         int
	StatusClass                    string
	RequestHeaders                 []result.Header
	RequestBody                    string
	ResponseHeaders                []result.Header
	ResponseBody                   string
}

func exchangeView(x result.Exchange, keep bool) htmlExchange {
	return htmlExchange{Role: roleLabel(x.Role), Method: x.Method, URL: x.URL, Short: shortURL(x.URL), Note: x.Note,
		Status: x.Status, StatusClass: fmt.Sprintf("s%dxx", x.Status/100), RequestHeaders: x.RequestHeaders,
		RequestBody: shownBody(x.RequestBody, keep, 0), ResponseHeaders: x.ResponseHeaders, ResponseBody: shownBody(x.ResponseBody, keep, 0)}
}

// htmlCoverage is the documentation coverage section, collapsed by default.
type htmlCoverage struct {
	Intro, Summary, Note string
	Heads                []string // one outcome column per result, in the section tables
	TotalHeads           []string // the same, in the totals table
	Totals               []htmlCovTotals
	Docs                 []htmlCovDoc
}

type htmlCovTotals struct {
	Name, Href, Counts string
	Outcomes           []string
	Failed             []bool
}

type htmlCovDoc struct {
	ID, Title, Doc, Lang, URL, Counts string
	Failed                            bool // a covered section failed in some result
	Sections                          []htmlCovSection
}

type htmlCovSection struct {
	Heading, SameAs, Status, Answer string
	Outcomes                        []htmlChecked // one per result; empty for uncovered sections
	Reqs                            []htmlCovReq
}

type htmlCovReq struct {
	ID, Href string
	Marks    []htmlChecked
}

type htmlChecked struct {
	Class, Glyph, Word, Title string
}

func checkedView(c result.Checked, label string) htmlChecked {
	n := checkedName(c)
	t := n.word
	if label != "" {
		t = label + ": " + t
	}
	return htmlChecked{Class: n.class, Glyph: n.glyph, Word: n.word, Title: t}
}

// coverageView lays out the coverage section: totals per document, then
// one collapsed table per document; a requirement links to its first
// failure when it has one, to its matrix row otherwise.
func coverageView(rep *reports.Report, labels []string, anchors []string) *htmlCoverage {
	covs := coverages(rep)
	if covs == nil {
		return nil
	}
	multi := len(covs) > 1
	hc := &htmlCoverage{Intro: strings.ReplaceAll(coverageIntro, "`", ""), Note: covs[0].Note}
	var outs []string
	for i, c := range covs {
		label := ""
		if multi {
			label = labels[i] + ": "
		}
		outs = append(outs, label+outcomeCounts(c.Totals, false))
		if multi {
			hc.Heads = append(hc.Heads, labels[i])
			hc.TotalHeads = append(hc.TotalHeads, "Covered sections: "+labels[i])
		} else {
			hc.Heads = append(hc.Heads, "This run")
			hc.TotalHeads = append(hc.TotalHeads, "Covered sections in this run")
		}
	}
	hc.Summary = statusCounts(covs[0].Totals) + "; covered ones in this run: " + strings.Join(outs, "; ")
	fails := firstFailure(rep)
	total := func(name, href string, tot func(*result.Coverage) result.CoverageTotals) {
		tr := htmlCovTotals{Name: name, Href: href, Counts: statusShort(tot(covs[0]))}
		for _, c := range covs {
			tr.Outcomes = append(tr.Outcomes, outcomeCounts(tot(c), false))
			tr.Failed = append(tr.Failed, tot(c).Outcomes[result.CheckedFailed] > 0)
		}
		hc.Totals = append(hc.Totals, tr)
	}
	for di, d := range covs[0].Documents {
		id := "coverage-" + docShort(d.Doc)
		total(docShort(d.Doc)+" "+d.Title, "#"+id, func(c *result.Coverage) result.CoverageTotals { return c.Documents[di].Totals })
		hd := htmlCovDoc{ID: id, Title: d.Title, Doc: d.Doc, Lang: d.Lang, URL: d.URL, Counts: statusCounts(d.Totals)}
		for si, s := range d.Sections {
			hs := htmlCovSection{Heading: sectionHeading(s), SameAs: strings.Join(s.SameAs, " · "), Status: s.Status, Answer: sectionAnswer(s)}
			for ci, c := range covs {
				if o := c.Documents[di].Sections[si].Outcome; o != "" {
					hs.Outcomes = append(hs.Outcomes, checkedView(o, labels[ci]))
					hd.Failed = hd.Failed || o == result.CheckedFailed
				}
			}
			for ri, rq := range s.Requirements {
				r := htmlCovReq{ID: rq.ID, Href: "#req-" + rq.ID}
				if i, ok := fails[rq.ID]; ok && i < len(anchors) {
					r.Href = "#" + anchors[i]
				}
				for ci, c := range covs {
					r.Marks = append(r.Marks, checkedView(c.Documents[di].Sections[si].Requirements[ri].Outcome, labels[ci]))
				}
				hs.Reqs = append(hs.Reqs, r)
			}
			hd.Sections = append(hd.Sections, hs)
		}
		hc.Docs = append(hc.Docs, hd)
	}
	total("all documents", "", func(c *result.Coverage) result.CoverageTotals { return c.Totals })
	return hc
}

type htmlSkipped struct {
	Label, Outcome, Name, Reason string
}

// htmlIcon is a one-glyph verdict for HTML.
func htmlIcon(s reports.Status) string { return statusName(s).glyph }

func percentBar(t reports.Tally) int {
	p := t.Percent()
	if p < 0 {
		return 0
	}
	return int(p + 0.5)
}

func conformanceClass(t reports.Tally) string {
	p := t.Percent()
	switch {
	case p < 0:
		return "none"
	case p >= 100:
		return "good"
	case p >= 90:
		return "warn"
	}
	return "bad"
}

// WriteHTML writes one self-contained HTML page: inline CSS and JS, no
// network fetch. Filters (area, level, outcome, text) read and write the URL
// fragment, e.g. report.html#outcome=fail&level=MUST.
func WriteHTML(w io.Writer, rep *reports.Report) error {
	v := htmlView{CSS: template.CSS(htmlCSS), JS: template.JS(htmlJS), NCols: 2 + len(rep.Columns), Changes: rep.Changes, Multi: len(rep.Columns) > 1,
		Counts: map[string]int{"regression": rep.Count(reports.Regression), "fix": rep.Count(reports.Fix), "changed": rep.Count(reports.Changed)},
		Tables: rep.Tables, Observed: rep.Observed, ObservedIntro: observedIntro}
	labels := make([]string, len(rep.Columns))
	for i, c := range rep.Columns {
		labels[i] = c.Label
		hc := htmlColumn{Label: c.Label, Server: c.Target.Server, Version: c.Target.Version, Started: fmtTime(c.StartedAt),
			Duration: fmtDuration(c.Duration), MustPercent: c.Must.PercentText(), MustText: fmt.Sprintf("%d of %d MUST requirements pass", c.Must.Pass, c.Must.Testable()),
			AllText: conformanceText(c.All), Specs: specsText(c.Specs), MustClass: conformanceClass(c.Must), MustBar: percentBar(c.Must), Tally: c.All}
		for _, n := range sortedKeys(c.Target.Capabilities) {
			hc.Caps = append(hc.Caps, htmlCap{Name: n, On: c.Target.Capabilities[n]})
		}
		v.Columns = append(v.Columns, hc)
	}
	v.Title = "apiconform report — " + strings.Join(labels, " vs ")
	for _, c := range rep.Columns {
		if h := incompleteText(rep, c); h != "" {
			v.Incomplete = append(v.Incomplete, h)
		}
	}
	v.Problems = problemsTitle(rep)
	var failureAnchors []string
	for i := range problems(rep) {
		failureAnchors = append(failureAnchors, fmt.Sprintf("failure-%d", i+1))
	}
	v.Coverage = coverageView(rep, labels, failureAnchors)

	// Failures and errors get anchors so matrix cells can link to them.
	anchors := map[[2]int]string{}
	for i, f := range problems(rep) {
		hf := failureView(f, fmt.Sprintf("failure-%d", i+1))
		v.Failures = append(v.Failures, hf)
		for si, s := range rep.Results[f.Column].Specs {
			if s.Name == f.Spec.Name && s.Outcome == f.Spec.Outcome {
				anchors[[2]int{f.Column, si}] = hf.Anchor
			}
		}
	}
	levelSeen := map[string]bool{}
	for ai, g := range rep.Areas {
		v.AreaNames = append(v.AreaNames, g.Name)
		ha := htmlArea{Name: g.Name}
		for _, t := range g.Totals {
			ha.Totals = append(ha.Totals, fmt.Sprintf("%d/%d", t.Pass, t.Testable()))
		}
		for ri, r := range g.Rows {
			rq := r.Requirement
			src := sourceOf(rq)
			hr := htmlRow{ID: rq.ID, Title: rq.Title, Level: levelText(r), Area: g.Name, Section: src.Section, Quote: src.Quote,
				Original: src.Original, Lang: src.Lang, URL: src.URL, Doc: rq.Source.Doc, Deviation: deviationText(r), Uncatalogued: r.Uncatalogued}
			levelSeen[hr.Level] = true
			var outs []string
			for ci, c := range r.Cells {
				outs = append(outs, string(c.Status))
				hc := htmlCell{Cell: c, Status: c.Status, Reason: c.Reason}
				if n := c.Passed + c.Failed + c.Errors + c.Skipped + c.NotApplicable + c.NotRun; n > 0 {
					hc.Counts = fmt.Sprintf("%d spec(s): %d passed, %d failed, %d error, %d skipped, %d not applicable, %d not run",
						n, c.Passed, c.Failed, c.Errors, c.Skipped, c.NotApplicable, c.NotRun)
				}
				if c.Status == reports.Fail || c.Status == reports.Error {
					hc.DetailID = fmt.Sprintf("detail-%d-%d-%d", ai, ri, ci)
					for _, si := range c.Specs {
						s := rep.Results[ci].Specs[si]
						if s.Outcome == result.Failed || s.Outcome == result.Errored {
							hc.Failures = append(hc.Failures, failureView(reports.SpecEntry{Column: ci, Label: labels[ci], Spec: s}, anchors[[2]int{ci, si}]))
						}
					}
				}
				hr.Cells = append(hr.Cells, hc)
			}
			hr.Outcomes = strings.Join(outs, " ")
			hr.Search = strings.ToLower(rq.ID + " " + rq.Title + " " + src.Section)
			ha.Rows = append(ha.Rows, hr)
			v.Total++
		}
		v.Areas = append(v.Areas, ha)
	}
	for _, l := range []string{"MUST", "SHOULD", "MAY", "?"} {
		if levelSeen[l] {
			v.Levels = append(v.Levels, l)
		}
	}
	for _, g := range rep.Areas {
		tr := htmlTotalsRow{Name: "area " + g.Name}
		for _, t := range g.Totals {
			tr.Totals = append(tr.Totals, t.PercentText()+" — "+tallyText(t))
		}
		v.LevelRows = append(v.LevelRows, tr)
	}
	for _, l := range rep.Levels {
		tr := htmlTotalsRow{Name: "level " + string(l.Level)}
		for _, t := range l.Totals {
			tr.Totals = append(tr.Totals, t.PercentText()+" — "+tallyText(t))
		}
		v.LevelRows = append(v.LevelRows, tr)
	}
	for ci, r := range rep.Results {
		for _, s := range r.Specs {
			switch s.Outcome {
			case result.Skipped, result.NotApplicable, result.NotRun:
				v.Skipped = append(v.Skipped, htmlSkipped{Label: labels[ci], Outcome: outcomeWord(s.Outcome), Name: s.Name, Reason: s.SkipReason})
			}
		}
	}
	return htmlTemplate().Execute(w, v)
}

func failureView(f reports.SpecEntry, anchor string) htmlFailure {
	hf := htmlFailure{Anchor: anchor, Label: f.Label, Spec: f.Spec, Class: "fail", Verdict: verdictLine(f.Spec)}
	if f.Spec.Outcome == result.Errored {
		hf.Class = "error"
	}
	if f.Spec.Failure != nil {
		hf.Message = f.Spec.Failure.Message
		hf.Location = f.Spec.Failure.Location
	}
	keep := keepsManagedFields(f.Spec)
	main, aside := exchangeGroups(f.Spec.Exchanges)
	if len(main) > 0 && main[0].Role == result.Decisive {
		d := exchangeView(main[0], keep)
		hf.Decisive = &d
		main = main[1:]
	}
	for _, x := range main {
		hf.Steps = append(hf.Steps, exchangeView(x, keep))
	}
	for _, x := range aside {
		hf.Aside = append(hf.Aside, exchangeView(x, keep))
	}
	return hf
}
