package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

// WriteMarkdown renders the full report as GitHub-flavoured Markdown:
// summary, one verdict line per failure, changes, matrix, totals, documented
// tables, then each failure's details (decisive exchange first) and the
// specs that were skipped, not applicable or not run.
func WriteMarkdown(out io.Writer, rep *reports.Report) error {
	w := bufio.NewWriter(out)
	labels := make([]string, len(rep.Columns))
	for i, c := range rep.Columns {
		labels[i] = mdCell(c.Label)
	}

	fmt.Fprintln(w, "# apiconform conformance report")
	fmt.Fprintln(w)
	for _, c := range rep.Columns {
		if h := incompleteText(rep, c); h != "" {
			fmt.Fprintf(w, "> [!WARNING]\n> **%s**\n\n", mdCell(h))
		}
	}
	fmt.Fprintf(w, "| | %s |\n", strings.Join(labels, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(labels)))
	row := func(name string, f func(reports.Column) string) {
		cells := make([]string, len(rep.Columns))
		for i, c := range rep.Columns {
			cells[i] = f(c)
		}
		fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	row("Server", func(c reports.Column) string { return mdCode(c.Target.Server) })
	row("Version", func(c reports.Column) string { return mdCode(c.Target.Version) })
	row("Started", func(c reports.Column) string { return fmtTime(c.StartedAt) })
	row("Duration", func(c reports.Column) string { return fmtDuration(c.Duration) })
	row("**MUST conformance**", func(c reports.Column) string {
		return fmt.Sprintf("**%s** (%d of %d)", c.Must.PercentText(), c.Must.Pass, c.Must.Testable())
	})
	row("All requirements", func(c reports.Column) string { return conformanceText(c.All) })
	row("Requirements", func(c reports.Column) string { return tallyText(c.All) })
	row("Specs", func(c reports.Column) string { return specsText(c.Specs) })
	row("Capabilities", func(c reports.Column) string { return mdCell(capabilitiesText(c.Target.Capabilities)) })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "> Conformance = requirements passed ÷ applicable, testable requirements; failed, errored, skipped, not-run and uncovered requirements count against it. "+
		"Legend: ✅ pass · ❌ fail · ⚠️ error (the harness could not finish the check) · ⏭️ skipped · ➖ not applicable · ⏸️ not run · ⚪ not covered.")

	probs := problems(rep)
	if len(probs) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## %s\n\n", problemsTitle(rep))
		for i, f := range probs {
			fmt.Fprintf(w, "%s [details](#%s)\n", summaryLine(rep, f), mdAnchor(i))
		}
	}

	if len(rep.Columns) > 1 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## Changes against %s\n\n", labels[0])
		fmt.Fprintf(w, "%d regressions · %d fixes · %d other changes.\n", rep.Count(reports.Regression), rep.Count(reports.Fix), rep.Count(reports.Changed))
		if len(rep.Changes) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| Change | Requirement | Level | Between | From | To |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|")
			for _, ch := range rep.Changes {
				kind := string(ch.Kind)
				switch ch.Kind {
				case reports.Regression:
					kind = "🔻 **regression**"
				case reports.Fix:
					kind = "🔺 fix"
				}
				fmt.Fprintf(w, "| %s | `%s`<br>%s | %s | %s → %s | %s %s | %s %s |\n", kind, ch.Requirement, mdCell(ch.Title), ch.Level,
					mdCell(ch.Baseline), mdCell(ch.Other), statusIcon(ch.From), statusWord(ch.From), statusIcon(ch.To), statusWord(ch.To))
			}
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Requirements")
	for _, g := range rep.Areas {
		fmt.Fprintln(w)
		tots := make([]string, len(g.Totals))
		for i, t := range g.Totals {
			tots[i] = fmt.Sprintf("%s %d/%d", labels[i], t.Pass, t.Testable())
		}
		fmt.Fprintf(w, "### %s\n\n%d requirements — passed: %s\n\n", mdCell(g.Name), len(g.Rows), strings.Join(tots, " · "))
		fmt.Fprintf(w, "| Requirement | Level | %s |\n", strings.Join(labels, " | "))
		fmt.Fprintf(w, "|---|---|%s\n", strings.Repeat("---|", len(labels)))
		for _, r := range g.Rows {
			desc := fmt.Sprintf("`%s`<br>%s", r.Requirement.ID, mdCell(r.Requirement.Title))
			if src := sourceOf(r.Requirement); src.Section != "" {
				desc += "<br><sub>" + mdCell(src.Section)
				if src.Quote != "" {
					desc += ": “" + mdCell(src.Quote) + "”"
				}
				if src.Original != "" {
					desc += " (" + src.Lang + ": " + mdCell(src.Original) + ")"
				}
				if src.URL != "" {
					desc += " — [source](" + src.URL + ")"
				}
				desc += "</sub>"
			}
			if r.Requirement.Deviation != nil {
				desc += "<br>⚠️ " + mdCell(deviationText(r))
			}
			cells := make([]string, len(r.Cells))
			for i, c := range r.Cells {
				cells[i] = statusIcon(c.Status) + " " + cellWord(c)
				if c.Reason != "" {
					cells[i] += "<br><sub>" + mdCell(c.Reason) + "</sub>"
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s |\n", desc, levelText(r), strings.Join(cells, " | "))
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Totals")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| Group | %s |\n", strings.Join(labels, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(labels)))
	for _, g := range rep.Areas {
		cells := make([]string, len(g.Totals))
		for i, t := range g.Totals {
			cells[i] = fmt.Sprintf("%s<br>%s", t.PercentText(), tallyText(t))
		}
		fmt.Fprintf(w, "| area `%s` | %s |\n", mdCell(g.Name), strings.Join(cells, " | "))
	}
	for _, l := range rep.Levels {
		cells := make([]string, len(l.Totals))
		for i, t := range l.Totals {
			cells[i] = fmt.Sprintf("%s<br>%s", t.PercentText(), tallyText(t))
		}
		fmt.Fprintf(w, "| level **%s** | %s |\n", l.Level, strings.Join(cells, " | "))
	}

	if len(rep.Tables) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "## Documented resourceVersion tables")
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Each cell checked by a requirement carries one mark per result, in order: %s.\n", strings.Join(labels, ", "))
		for _, t := range rep.Tables {
			fmt.Fprintln(w)
			fmt.Fprintf(w, "### %s\n\n", mdCell(t.Title))
			hs := make([]string, len(t.Header))
			for i, h := range t.Header {
				hs[i] = mdCell(h)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(hs, " | "))
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(hs)))
			for _, row := range t.Rows {
				cells := make([]string, len(row))
				for i, c := range row {
					cells[i] = mdCell(c.Text)
					if len(c.Statuses) > 0 {
						var marks string
						for _, s := range c.Statuses {
							marks += statusIcon(s)
						}
						cells[i] += " " + marks + "<br><sub>" + mdCell(strings.Join(c.Requirements, ", ")) + "</sub>"
					}
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			}
		}
	}

	mdCoverage(w, rep, labels)

	if len(probs) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "## Failure details")
		for i, f := range probs {
			mdFailure(w, rep, f, i)
		}
	}

	var skipped []string
	for ci, r := range rep.Results {
		for _, s := range r.Specs {
			switch s.Outcome {
			case result.Skipped, result.NotApplicable, result.NotRun:
				skipped = append(skipped, fmt.Sprintf("| %s | %s | %s | %s |", labels[ci], outcomeWord(s.Outcome), mdCell(s.Name), mdCell(s.SkipReason)))
			}
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## Skipped, not applicable and not run (%d)\n\n", len(skipped))
		fmt.Fprintln(w, "| Result | Outcome | Spec | Reason |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, s := range skipped {
			fmt.Fprintln(w, s)
		}
	}
	mdObserved(w, rep)
	return w.Flush()
}

// mdObserved lists the specs that recorded what they saw, collapsed: a
// reader looking for why a spec passed opens it.
func mdObserved(w io.Writer, rep *reports.Report) {
	if len(rep.Observed) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## What the specs saw (%d)\n\n", len(rep.Observed))
	fmt.Fprintln(w, observedIntro)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "<details><summary>%d spec(s) recorded what they saw</summary>\n\n", len(rep.Observed))
	fmt.Fprintln(w, "| Result | Outcome | Spec | Observed |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, e := range rep.Observed {
		seen := make([]string, len(e.Spec.Observations))
		for i, o := range e.Spec.Observations {
			seen[i] = "**" + mdCell(o.Name) + "**: " + mdCell(clip(o.Text, maxShownObservation))
		}
		fmt.Fprintf(w, "| %s | %s | %s<br><sub>%s</sub> | %s |\n", mdCell(e.Label), outcomeWord(e.Spec.Outcome), mdCell(e.Spec.Name),
			mdCell(reqIDs(e.Spec)), strings.Join(seen, "<br>"))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "</details>")
}

// mdCoverage writes the documentation coverage section: totals per
// document, then per document each section with what answers for it and,
// for a covered one, its requirements' outcomes (one mark per result).
func mdCoverage(w io.Writer, rep *reports.Report, labels []string) {
	covs := coverages(rep)
	if covs == nil {
		return
	}
	multi := len(covs) > 1
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Documentation coverage")
	fmt.Fprintln(w)
	fmt.Fprintln(w, coverageIntro)
	if multi {
		fmt.Fprintf(w, "Outcomes carry one mark per result, in order: %s.\n", strings.Join(labels, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "> Legend: %s.\n", coverageLegend)
	if covs[0].Note != "" {
		fmt.Fprintf(w, "\n> [!WARNING]\n> %s\n", mdCell(covs[0].Note))
	}
	fmt.Fprintln(w)
	heads := make([]string, len(labels))
	for i, l := range labels {
		heads[i] = "Covered sections in this run"
		if multi {
			heads[i] = "Covered sections: " + l
		}
	}
	fmt.Fprintf(w, "| Document | Sections | Covered | Static | Untestable | Gap | %s |\n", strings.Join(heads, " | "))
	fmt.Fprintf(w, "|---|---|---|---|---|---|%s\n", strings.Repeat("---|", len(heads)))
	total := func(name string, t func(*result.Coverage) result.CoverageTotals) {
		first := t(covs[0])
		cells := make([]string, len(covs))
		for i, c := range covs {
			cells[i] = outcomeCounts(t(c), true)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %s |\n", name, first.Sections, first.Covered, first.Static, first.Untestable, first.Gap, strings.Join(cells, " | "))
	}
	for di, d := range covs[0].Documents {
		total(fmt.Sprintf("[%s](#%s) `%s`", mdCell(d.Title), mdDocAnchor(d.Doc), docShort(d.Doc)),
			func(c *result.Coverage) result.CoverageTotals { return c.Documents[di].Totals })
	}
	total("**All documents**", func(c *result.Coverage) result.CoverageTotals { return c.Totals })

	fails := firstFailure(rep)
	for di, d := range covs[0].Documents {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "### <a id=\"%s\"></a>%s\n\n", mdDocAnchor(d.Doc), mdCell(d.Title))
		src := "`" + d.Doc + "`"
		if d.Lang != "" {
			src += " · " + d.Lang
		}
		if d.URL != "" {
			src += " · [upstream](" + d.URL + ")"
		}
		outs := make([]string, len(covs))
		for ci, c := range covs {
			outs[ci] = outcomeCounts(c.Documents[di].Totals, false)
			if multi {
				outs[ci] = labels[ci] + ": " + outs[ci]
			}
		}
		fmt.Fprintf(w, "%s · %s; covered: %s\n\n", src, statusCounts(d.Totals), strings.Join(outs, "; "))
		if multi {
			fmt.Fprintf(w, "| Section | Status | %s | Requirements, rules or reason |\n", strings.Join(labels, " | "))
		} else {
			fmt.Fprintln(w, "| Section | Status | This run | Requirements, rules or reason |")
		}
		fmt.Fprintf(w, "|---|---|%s---|\n", strings.Repeat("---|", len(covs)))
		for si, s := range d.Sections {
			title := mdCell(sectionHeading(s))
			if len(s.SameAs) > 0 {
				title += "<br><sub>= " + mdCell(strings.Join(s.SameAs, " · ")) + "</sub>"
			}
			outs := make([]string, len(covs))
			for ci, c := range covs {
				if o := c.Documents[di].Sections[si].Outcome; o != "" {
					outs[ci] = checkedName(o).icon + " " + checkedName(o).word
				}
			}
			answer := mdCell(sectionAnswer(s))
			if s.Status == "covered" {
				reqs := make([]string, len(s.Requirements))
				for ri, rq := range s.Requirements {
					var marks string
					for _, c := range covs {
						marks += checkedName(c.Documents[di].Sections[si].Requirements[ri].Outcome).icon
					}
					id := "`" + rq.ID + "`"
					if i, ok := fails[rq.ID]; ok {
						id = "[" + id + "](#" + mdAnchor(i) + ")"
					}
					reqs[ri] = marks + " " + id
				}
				answer = strings.Join(reqs, " · ")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", title, s.Status, strings.Join(outs, " | "), answer)
		}
	}
}

// mdDocAnchor is the id of a document's coverage table.
func mdDocAnchor(doc string) string { return "coverage-" + docShort(doc) }

// mdAnchor is the id of the i-th failure's details.
func mdAnchor(i int) string { return fmt.Sprintf("failure-%d", i+1) }

// mdFailure writes one failure's details: verdict, requirements, message,
// the decisive exchange in full, other steps and setup/teardown collapsed.
func mdFailure(w io.Writer, rep *reports.Report, f reports.SpecEntry, i int) {
	icon := "❌"
	if f.Spec.Outcome == result.Errored {
		icon = "⚠️"
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "### <a id=\"%s\"></a>%s %s — %s\n\n", mdAnchor(i), icon, mdCell(f.Label), mdCell(f.Spec.Name))
	fmt.Fprintf(w, "**%s**\n\n", mdText(verdictLine(f.Spec)))
	reqs := make([]string, len(f.Spec.Requirements))
	for i, id := range f.Spec.Requirements {
		reqs[i] = "`" + id + "`"
		if row, ok := rep.Requirement(id); ok && row.Requirement.Title != "" {
			reqs[i] += " (" + mdText(row.Requirement.Title) + ")"
		}
	}
	fmt.Fprintf(w, "Requirements: %s · area `%s`", strings.Join(reqs, ", "), mdCell(f.Spec.Area))
	if f.Spec.Failure != nil && f.Spec.Failure.Location != "" {
		fmt.Fprintf(w, " · at `%s`", f.Spec.Failure.Location)
	}
	fmt.Fprintln(w)
	if len(f.Spec.Observations) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Observed:")
		for _, o := range f.Spec.Observations {
			fmt.Fprintf(w, "- %s\n", mdText(observationLine(o, maxShownObservation)))
		}
	}
	keep := keepsManagedFields(f.Spec)
	main, aside := exchangeGroups(f.Spec.Exchanges)
	if len(main) > 0 && main[0].Role == result.Decisive {
		fmt.Fprintln(w)
		fmt.Fprint(w, mdExchange(main[0], keep, maxShownBody))
		main = main[1:]
	}
	if f.Spec.Failure != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "<details><summary>Failure message</summary>\n\n%s\n</details>\n", mdFence("text", f.Spec.Failure.Message))
	}
	if len(main) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "<details><summary>%d other request(s) of the spec</summary>\n", len(main))
		for _, x := range main {
			fmt.Fprintln(w)
			fmt.Fprint(w, mdExchange(x, keep, maxStepBody))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "</details>")
	}
	if len(aside) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "<details><summary>%d setup/teardown request(s)</summary>\n\n", len(aside))
		for _, x := range aside {
			fmt.Fprintf(w, "- %s `%s`\n", roleLabel(x.Role), strings.ReplaceAll(exchangeHead(x), "`", "'"))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "</details>")
	}
}

// maxStepBody bounds the bodies of a failure's other requests in Markdown.
const maxStepBody = 600

// mdExchange shows one exchange; request headers only for the decisive one
// (the others' are the client's usual Accept, Content-Type, User-Agent).
func mdExchange(x result.Exchange, keep bool, limit int) string {
	var b strings.Builder
	role := ""
	if x.Role == result.Decisive {
		role = "Decisive request: "
	}
	fmt.Fprintf(&b, "%s**%s** `%s` → **%d**", role, x.Method, strings.ReplaceAll(x.URL, "`", "%60"), x.Status)
	if x.Note != "" {
		fmt.Fprintf(&b, " (%s)", mdCell(x.Note))
	}
	b.WriteString("\n\n")
	var req strings.Builder
	if x.Role == result.Decisive {
		for _, h := range x.RequestHeaders {
			fmt.Fprintf(&req, "%s: %s\n", h.Name, h.Value)
		}
	}
	if x.RequestBody != "" {
		fmt.Fprintf(&req, "\n%s\n", shownBody(x.RequestBody, keep, limit))
	}
	if req.Len() > 0 {
		b.WriteString(mdFence("http", "# request\n"+req.String()))
	}
	var resp strings.Builder
	for _, h := range x.ResponseHeaders {
		fmt.Fprintf(&resp, "%s: %s\n", h.Name, h.Value)
	}
	if x.ResponseBody != "" {
		fmt.Fprintf(&resp, "\n%s\n", shownBody(x.ResponseBody, keep, limit))
	}
	if resp.Len() > 0 {
		b.WriteString(mdFence("http", "# response\n"+resp.String()))
	}
	return b.String()
}

// mdFence wraps s in a code fence longer than any backtick run inside it.
func mdFence(lang, s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// mdCell makes s safe inside a table cell: one line, escaped pipes and HTML.
func mdCell(s string) string {
	r := strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "<", "&lt;", ">", "&gt;", "&", "&amp;")
	return r.Replace(s)
}

// mdCode renders s as inline code, or an em dash when empty.
func mdCode(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s) + "`"
}
