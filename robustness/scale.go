package robustness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ScaleConfig is the storage scenario of issue #17: a bbolt store holding
// many small configmaps, filled through the server and restarted.
type ScaleConfig struct {
	Objects    int // configmaps created
	ValueBytes int // size of each configmap's data
	Writers    int // concurrent clients filling the store
}

// DefaultScale is the scenario: 100,000 configmaps of 1 KiB.
var DefaultScale = ScaleConfig{Objects: 100_000, ValueBytes: 1 << 10, Writers: 8}

// Mem is a process's resident memory in bytes: in all, at its peak, and
// split into anonymous pages (the Go heap, stacks) and pages of mapped files
// (the binary's own, and bbolt's mmap of the data file: page cache the
// kernel may take back).
type Mem struct{ RSS, HWM, Anon, File int64 }

// ScaleFigures are the server process's figures.
type ScaleFigures struct {
	Objects   int
	RawBytes  int64         // Objects × ValueBytes
	FileBytes int64         // the bbolt file after the fill
	Fill      time.Duration // creating every object through the server
	Loaded    Mem           // after the fill, 2 s later (HWM: the fill's peak)
	Ready     time.Duration // restart: process start to the first 200 from /readyz
	ReadyCPU  time.Duration // the CPU the process used until then (less swayed by other processes than Ready)
	// FirstWrite: restart to the first acknowledged write, sent at
	// /readyz. Writes wait for the check of the whole file, which goes on
	// after the server is ready, so this is about when that check ended.
	FirstWrite       time.Duration
	FirstWriteCPU    time.Duration // the process's CPU until then
	Restarted        Mem           // at /readyz after the restart
	RestartedSettled Mem           // 2 s later
	ReadAll          time.Duration // a paged list of every object (500 a page) after the restart
	AfterReadAll     Mem           // after that list, 2 s later
	Listed           int           // objects the list returned
}

func (f ScaleFigures) String() string {
	mb := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	mem := func(m Mem) string {
		return fmt.Sprintf("%s = %.2f× raw (anon %s, file %s)", mb(m.RSS), float64(m.RSS)/float64(f.RawBytes), mb(m.Anon), mb(m.File))
	}
	fill := fmt.Sprintf("fill %v; RSS after the fill %s, peak %s", f.Fill.Round(time.Millisecond), mem(f.Loaded), mb(f.Loaded.HWM))
	if f.Fill == 0 {
		fill = "fill skipped (the data file was there)"
	}
	return fmt.Sprintf("%d objects, raw data %s, bbolt file %s; %s; restart to /readyz %v (CPU %v), to the first write %v (CPU %v); RSS at ready %s, 2 s later %s; paged read of all %d objects %v, RSS 2 s after it %s",
		f.Objects, mb(f.RawBytes), mb(f.FileBytes), fill, f.Ready.Round(time.Millisecond), f.ReadyCPU, f.FirstWrite.Round(time.Millisecond), f.FirstWriteCPU,
		mem(f.Restarted), mem(f.RestartedSettled), f.Listed, f.ReadAll.Round(time.Millisecond), mem(f.AfterReadAll))
}

// Scale runs `apiconform-refserver --data-dir dir`, fills it with cfg.Objects
// configmaps through the API, restarts it, and measures the server process.
// When dir already holds a data file (filled by an earlier run of the same
// scenario), the fill is skipped and only the restart is measured.
func Scale(ctx context.Context, bin, dir string, cfg ScaleConfig) (ScaleFigures, error) {
	f := ScaleFigures{Objects: cfg.Objects, RawBytes: int64(cfg.Objects) * int64(cfg.ValueBytes)}
	file := filepath.Join(dir, "refserver.db")
	if _, err := os.Stat(file); err != nil { // else a file filled before: measure its restart only
		if err := scaleFill(ctx, bin, dir, cfg, &f); err != nil {
			return f, err
		}
	}
	if st, err := os.Stat(file); err == nil {
		f.FileBytes = st.Size()
	}

	addr, err := freeLoopbackAddr()
	if err != nil {
		return f, err
	}
	began := time.Now()
	srv, err := serve(ctx, bin, "--data-dir", dir, "--insecure-addr", addr)
	if err != nil {
		return f, fmt.Errorf("restart: %w", err)
	}
	defer srv.stop()
	if err := waitReady(ctx, srv.URL); err != nil {
		return f, err
	}
	f.Ready = time.Since(began)
	pid := strconv.Itoa(srv.cmd.Process.Pid)
	f.ReadyCPU = procCPU(pid)
	f.Restarted = procMem(pid)
	if err := scaleProbeWrite(ctx, srv.URL); err != nil {
		return f, err
	}
	f.FirstWrite = time.Since(began)
	f.FirstWriteCPU = procCPU(pid)
	time.Sleep(2 * time.Second)
	f.RestartedSettled = procMem(pid)

	began = time.Now()
	if f.Listed, err = listAll(ctx, srv.URL, "scale"); err != nil {
		return f, err
	}
	f.ReadAll = time.Since(began)
	if f.Listed != cfg.Objects {
		return f, fmt.Errorf("after the restart the list has %d objects, want %d", f.Listed, cfg.Objects)
	}
	time.Sleep(2 * time.Second)
	f.AfterReadAll = procMem(pid)
	return f, nil
}

// scaleProbeWrite creates and deletes a configmap outside the measured
// namespace, so the data file keeps its objects across runs.
func scaleProbeWrite(ctx context.Context, base string) error {
	c := newClient(base, "")
	const path = "/api/v1/namespaces/default/configmaps"
	if code, err := c.do(ctx, http.MethodPost, path, cm("scale-restart-probe", "none", "v"), nil); err != nil || code != http.StatusCreated {
		return fmt.Errorf("first write after the restart: %d %v", code, err)
	}
	if code, err := c.do(ctx, http.MethodDelete, path+"/scale-restart-probe", nil, nil); err != nil || code != http.StatusOK {
		return fmt.Errorf("delete after the first write: %d %v", code, err)
	}
	return nil
}

// scaleFill creates cfg.Objects configmaps through a server on dir and
// takes its RSS 2 s after the last.
func scaleFill(ctx context.Context, bin, dir string, cfg ScaleConfig, f *ScaleFigures) error {
	srv, err := serve(ctx, bin, "--data-dir", dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	began := time.Now()
	err = fill(ctx, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Writers}}, srv.URL, "scale",
		AmplifyConfig{Objects: cfg.Objects, ValueBytes: cfg.ValueBytes, Concurrency: cfg.Writers})
	f.Fill = time.Since(began)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	time.Sleep(2 * time.Second)
	f.Loaded = procMem(strconv.Itoa(srv.cmd.Process.Pid))
	return nil
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady polls /readyz every 2 ms until it answers 200 (bounded by ctx).
func waitReady(ctx context.Context, base string) error {
	c := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("/readyz: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// listAll reads namespace ns's configmaps in pages of 500 and counts them.
func listAll(ctx context.Context, base, ns string) (int, error) {
	c := &http.Client{}
	n, cont := 0, ""
	for {
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []struct{} `json:"items"`
		}
		u := base + "/api/v1/namespaces/" + ns + "/configmaps?limit=500&continue=" + url.QueryEscape(cont)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err != nil {
			return n, err
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return n, fmt.Errorf("list %s: %d %v", u, resp.StatusCode, err)
		}
		n += len(page.Items)
		if page.Metadata.Continue == "" {
			return n, nil
		}
		cont = page.Metadata.Continue
	}
}

// scaleObjects reads APICONFORM_ROBUSTNESS_SCALE: a number above 1 is the
// object count; any other non-empty value runs the default scenario.
func scaleObjects() (int, bool) {
	v := strings.TrimSpace(os.Getenv("APICONFORM_ROBUSTNESS_SCALE"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n > 1 {
		return n, true
	}
	return DefaultScale.Objects, true
}
