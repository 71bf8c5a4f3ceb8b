package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/suites/framework"
)

// Ginkgo runs specs once per process, so `-p N` runs N copies of this binary,
// each on its share of the areas, and merges their results. Areas are the
// unit of sharing because every spec already works in its own namespace.

// An interrupt reaches only this process (workers run in their own process
// group, so a terminal's Ctrl-C does not hit them twice): it is passed on to
// each worker once, as SIGINT, and each worker stops, cleans up and writes
// what it has. A worker that leaves no result makes the run incomplete.

// workerGrace is how long a signalled worker may take to clean up and write
// its result before it is killed.
const workerGrace = 60 * time.Second

func runWorkers(ctx, sigCtx context.Context, o *runOptions, sel selection, target framework.Target, stderr io.Writer) (result.Result, error) {
	groups := shareAreas(selectedAreas(sel), o.parallel)
	self, err := os.Executable()
	if err != nil {
		return result.Result{}, fmt.Errorf("parallel run: %w", err)
	}
	tmp, err := os.MkdirTemp("", "apiconform-workers-")
	if err != nil {
		return result.Result{}, err
	}
	defer os.RemoveAll(tmp)

	progress := newProgressPrinter(stderr, o.quiet)
	agg := &workerProgress{totals: make([]int, len(groups)), done: make([]int, len(groups))}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	files := make([]string, len(groups))
	for i, group := range groups {
		files[i] = filepath.Join(tmp, fmt.Sprintf("worker-%d.json", i))
		args := workerArgs(o, sel, target, group, files[i])
		cmd := exec.CommandContext(ctx, self, args...)
		// One history lock for the run (suites/framework/historylock.go).
		cmd.Env = append(os.Environ(), tokenEnv+"="+target.Token, framework.HistoryLockEnv+"="+tmp)
		cmd.SysProcAttr = ownProcessGroup()
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = workerGrace
		pipe, err := cmd.StderrPipe()
		if err != nil {
			return result.Result{}, err
		}
		if err := cmd.Start(); err != nil {
			return result.Result{}, fmt.Errorf("start worker: %w", err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			agg.follow(i, pipe, progress, stderr)
			if err := cmd.Wait(); err != nil {
				errs[i] = fmt.Errorf("worker for %s: %w", strings.Join(groups[i], ","), err)
			}
		}(i)
	}
	wg.Wait()
	progress.finish()

	parts := make([]result.Result, len(files))
	for i, file := range files {
		part, err := result.ReadFile(file)
		if err == nil {
			parts[i] = part // an interrupted worker exits non-zero but leaves its result
			continue
		}
		why := err
		if errs[i] != nil {
			why = errs[i]
		}
		cause := result.WorkerFailed
		if sigCtx.Err() != nil {
			cause = result.Interrupted
		}
		fmt.Fprintf(stderr, "apiconform: worker for %s left no result: %v\n", strings.Join(groups[i], ","), why)
		done, total := agg.counts(i)
		parts[i] = result.Result{SchemaVersion: result.SchemaVersion, Specs: []result.SpecResult{},
			Incomplete: &result.Incomplete{Cause: cause, Detail: fmt.Sprintf("worker for %s: %v", strings.Join(groups[i], ","), why),
				Done: done, Total: total}}
	}
	merged := result.Merge(parts...)
	if merged.Target.Name == "" {
		for _, p := range parts {
			if p.Target.Name != "" {
				merged.Target = p.Target
				break
			}
		}
	}
	merged.Duration = result.Duration(time.Since(start))
	return merged, nil
}

// selectedAreas are the areas the selection touches: the focused areas and
// those of the focused requirements, or every area not skipped.
func selectedAreas(sel selection) []string {
	if len(sel.areas) == 0 && len(sel.requirements) == 0 {
		return slices.DeleteFunc(catalog.Areas(), func(a string) bool { return slices.Contains(sel.skipAreas, a) })
	}
	areas := slices.Clone(sel.areas)
	for _, id := range sel.requirements {
		if r, ok := catalog.ByID(id); ok && !slices.Contains(areas, r.Area) {
			areas = append(areas, r.Area)
		}
	}
	return areas
}

// workerFocus is a worker's share of the focus: each of its areas whole when
// the area itself was focused (or nothing was), else the focused
// requirements of that area.
func workerFocus(sel selection, areas []string) []string {
	var out []string
	whole := len(sel.areas) == 0 && len(sel.requirements) == 0
	for _, a := range areas {
		if whole || slices.Contains(sel.areas, a) {
			out = append(out, a)
			continue
		}
		for _, id := range sel.requirements {
			if r, ok := catalog.ByID(id); ok && r.Area == a {
				out = append(out, id)
			}
		}
	}
	return out
}

// areaSeconds is about how long each area's specs take against
// kube-apiserver v1.36.3 (the sum of their durations in one run's
// result.json). Waiting for CRDs to be established and for the server's own
// delays dominates, which an area's number of requirements or specs does not
// predict. Stale figures cost balance, never results.
var areaSeconds = map[string]float64{
	"fieldvalidation": 22, "clients": 21, "compatibility": 20, "resources": 15, "conventions": 13,
	"resourceversion": 13, "watch": 8, "deletion": 2, "paging": 1.5, "dryrun": 1, "apply": 0.5,
}

// newAreaSeconds weighs an area areaSeconds does not list yet.
const newAreaSeconds = 5

// shareAreas splits areas into at most n groups of similar expected
// duration (areaSeconds), the longest first into the lightest group.
func shareAreas(areas []string, n int) [][]string {
	weight := func(a string) float64 {
		if w, ok := areaSeconds[a]; ok {
			return w
		}
		return newAreaSeconds
	}
	sorted := append([]string(nil), areas...)
	sort.SliceStable(sorted, func(i, j int) bool { return weight(sorted[i]) > weight(sorted[j]) })
	n = min(n, len(sorted))
	groups := make([][]string, n)
	load := make([]float64, n)
	for _, a := range sorted {
		lightest := 0
		for g := range groups {
			if load[g] < load[lightest] {
				lightest = g
			}
		}
		groups[lightest] = append(groups[lightest], a)
		load[lightest] += weight(a)
	}
	return groups
}

func workerArgs(o *runOptions, sel selection, t framework.Target, areas []string, out string) []string {
	args := []string{"run", "--worker-result", out, "--fail-on", "none", "--format", "json",
		"--level", o.level, "--timeout", o.timeout.String(), "--request-timeout", o.requestTimeout.String(),
		"--watch-timeout", o.watchTimeout.String(), "--compaction-wait", o.compactionWait.String(),
		"--target-name", t.Name, "--focus", strings.Join(workerFocus(sel, areas), ",")}
	if len(o.skip) > 0 {
		args = append(args, "--skip", strings.Join(o.skip, ","))
	}
	if o.verbose {
		args = append(args, "--verbose")
	}
	if t.Kubeconfig != "" {
		args = append(args, "--kubeconfig", t.Kubeconfig)
		if t.Context != "" {
			args = append(args, "--context", t.Context)
		}
		return args
	}
	args = append(args, "--server", t.Server)
	if t.CertificateAuthority != "" {
		args = append(args, "--certificate-authority", t.CertificateAuthority)
	}
	if t.InsecureSkipTLSVerify {
		args = append(args, "--insecure-skip-tls-verify")
	}
	return args
}

// workerProgress adds the workers' progress lines into one count.
type workerProgress struct {
	mu           sync.Mutex
	totals, done []int
}

// counts is worker i's progress: specs finished and selected.
func (a *workerProgress) counts(i int) (done, total int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.done[i], a.totals[i]
}

func (a *workerProgress) follow(i int, r io.Reader, p *progressPrinter, passthrough io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, workerLinePrefix)
		if !ok {
			fmt.Fprintln(passthrough, line)
			continue
		}
		f := strings.SplitN(rest, "\t", 5)
		if len(f) < 5 {
			continue
		}
		done, _ := strconv.Atoi(f[0])
		total, _ := strconv.Atoi(f[1])
		a.mu.Lock()
		a.done[i], a.totals[i] = done, total
		sumDone, sumTotal := 0, 0
		for k := range a.done {
			sumDone += a.done[k]
			sumTotal += a.totals[k]
		}
		a.mu.Unlock()
		p.report(sumDone, sumTotal, f[2], f[3], f[4])
	}
}
