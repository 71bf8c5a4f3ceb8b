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

func runWorkers(ctx context.Context, o *runOptions, sel selection, target framework.Target, stderr io.Writer) (result.Result, error) {
	areas := sel.areas
	if len(areas) == 0 {
		areas = slices.DeleteFunc(catalog.Areas(), func(a string) bool { return slices.Contains(sel.skipAreas, a) })
	}
	groups := shareAreas(areas, o.parallel)
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
		cmd.Env = append(os.Environ(), tokenEnv+"="+target.Token)
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
		if errs[i] != nil {
			return result.Result{}, errs[i]
		}
		if parts[i], err = result.ReadFile(file); err != nil {
			return result.Result{}, fmt.Errorf("worker for %s: %w", strings.Join(groups[i], ","), err)
		}
	}
	merged := result.Merge(parts...)
	merged.Duration = result.Duration(time.Since(start))
	return merged, nil
}

// shareAreas splits areas into at most n groups of similar size, weighing an
// area by its number of requirements.
func shareAreas(areas []string, n int) [][]string {
	weight := map[string]int{}
	for _, r := range catalog.All() {
		weight[r.Area]++
	}
	sorted := append([]string(nil), areas...)
	sort.SliceStable(sorted, func(i, j int) bool { return weight[sorted[i]] > weight[sorted[j]] })
	n = min(n, len(sorted))
	groups := make([][]string, n)
	load := make([]int, n)
	for _, a := range sorted {
		lightest := 0
		for g := range groups {
			if load[g] < load[lightest] {
				lightest = g
			}
		}
		groups[lightest] = append(groups[lightest], a)
		load[lightest] += max(weight[a], 1)
	}
	return groups
}

func workerArgs(o *runOptions, sel selection, t framework.Target, areas []string, out string) []string {
	args := []string{"run", "--worker-result", out, "--fail-on", "none", "--format", "json",
		"--level", o.level, "--timeout", o.timeout.String(), "--request-timeout", o.requestTimeout.String(),
		"--watch-timeout", o.watchTimeout.String(), "--compaction-wait", o.compactionWait.String(),
		"--target-name", t.Name, "--focus", strings.Join(append(append([]string{}, areas...), focusedRequirements(o.focus)...), ",")}
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

// focusedRequirements keeps the requirement IDs of a --focus list.
func focusedRequirements(focus []string) []string {
	var ids []string
	for _, f := range focus {
		if _, ok := catalog.ByID(strings.TrimSpace(f)); ok {
			ids = append(ids, strings.TrimSpace(f))
		}
	}
	return ids
}

// workerProgress adds the workers' progress lines into one count.
type workerProgress struct {
	mu           sync.Mutex
	totals, done []int
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
		p.report(sumDone, sumTotal, f[2] == "FAIL", f[3], f[4])
	}
}
