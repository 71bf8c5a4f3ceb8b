package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/suites/runner"
)

// isTerminal reports whether w is an interactive terminal (colour and a
// rewritten progress line only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progressPrinter shows specs done / total, failures as they happen and the
// elapsed time. On a terminal the count is one rewritten line; elsewhere (CI
// logs) it prints a line every tenth of the run.
type progressPrinter struct {
	mu     sync.Mutex
	w      io.Writer
	quiet  bool
	tty    bool
	start  time.Time
	failed int
	step   int
}

func newProgressPrinter(w io.Writer, quiet bool) *progressPrinter {
	return &progressPrinter{w: w, quiet: quiet, tty: isTerminal(w), start: time.Now()}
}

func (p *progressPrinter) update(pr runner.Progress) {
	p.report(pr.Done, pr.Total, progressState(pr), pr.Spec.FullText(), firstLine(pr.Spec.Failure.Message))
}

// progressState is the word a finished spec gets on a progress line.
func progressState(pr runner.Progress) string {
	switch result.OutcomeOf(pr.Spec) {
	case result.Failed:
		return "FAIL"
	case result.Errored:
		return "ERROR"
	case result.Passed:
		return "ok"
	}
	return "skip"
}

// report prints one finished spec: the failure or error when there was one,
// then the count.
func (p *progressPrinter) report(done, total int, state, name, msg string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start).Round(100 * time.Millisecond)
	switch state {
	case "FAIL":
		p.failed++
		p.clearLine()
		fmt.Fprintf(p.w, "FAIL %s\n     %s\n", name, msg)
	case "ERROR":
		p.clearLine()
		fmt.Fprintf(p.w, "ERROR %s\n     %s\n", name, msg)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r[%d/%d] %d failed · %s", done, total, p.failed, elapsed)
		return
	}
	if total > 0 {
		if step := done * 10 / total; step > p.step || done == total {
			p.step = step
			fmt.Fprintf(p.w, "[%d/%d] %d failed · %s\n", done, total, p.failed, elapsed)
		}
	}
}

// workerLine is the progress of one `-p` worker: one line per spec, which
// the parent reads to keep its own count.
func (p *progressPrinter) workerLine(pr runner.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s%d\t%d\t%s\t%s\t%s\n", workerLinePrefix, pr.Done, pr.Total, progressState(pr),
		oneLine(pr.Spec.FullText()), oneLine(firstLine(pr.Spec.Failure.Message)))
}

// workerLinePrefix marks a worker's progress lines on its stderr.
const workerLinePrefix = "@apiconform-progress\t"

func (p *progressPrinter) clearLine() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progressPrinter) finish() {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

func oneLine(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
