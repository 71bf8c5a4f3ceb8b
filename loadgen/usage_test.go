package loadgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1294609551 312084575 1056\n", 1294609551, true},
		{"0 0 0", 0, true},
		{"12 34", 0, false},
		{"x 1 2", 0, false},
		{"-5 1 2", 0, false},
		{"", 0, false},
	} {
		got, ok := parseSchedstat(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseSchedstat(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseMinorFaults(t *testing.T) {
	const tail = " S 1 2 3 0 -1 4194560 4821 0 12 0 90 30 0 0 20 0 9 0 100 0 0\n"
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1234 (apiconform)" + tail, 4821, true},
		// A command may hold spaces and parentheses: the fields start after the last ')'.
		{"1234 (a) b (c d)" + tail, 4821, true},
		{"1234 (apiconform) S 1 2 3", 0, false},
		{"1234 apiconform S 1 2 3 0 -1 4194560 4821", 0, false},
		{"1234 (x) S 1 2 3 0 -1 4194560 many 0", 0, false},
	} {
		got, ok := parseMinorFaults(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMinorFaults(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// fakeProc writes a /proc with the given processes: each its minor faults
// and its threads' run times in nanoseconds.
func fakeProc(t *testing.T, procs map[string]struct {
	faults  string
	threads map[string]string
}) string {
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(dir, "task"), 0o755); err != nil {
			t.Fatal(err)
		}
		stat := pid + " (srv) S 1 2 3 0 -1 4194560 " + p.faults + " 0 0 0 1 1 0 0 20 0 2 0 100 0 0\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		for tid, ns := range p.threads {
			if err := os.MkdirAll(filepath.Join(dir, "task", tid), 0o755); err != nil {
				t.Fatal(err)
			}
			if ns == "" {
				continue // a thread that exited after the listing: no schedstat
			}
			if err := os.WriteFile(filepath.Join(dir, "task", tid, "schedstat"), []byte(ns+" 5 7\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestReadUsage(t *testing.T) {
	type proc = struct {
		faults  string
		threads map[string]string
	}
	root := fakeProc(t, map[string]proc{
		"10": {"100", map[string]string{"10": "1000", "11": "2500", "12": ""}},
		"20": {"7", map[string]string{"20": "500000"}},
		"30": {"bad", map[string]string{"30": "1"}},
	})
	defer func(old string) { procRoot = old }(procRoot)
	procRoot = root
	for _, tc := range []struct {
		pids []int
		want Usage
		err  string
	}{
		{[]int{10}, Usage{CPU: 3500, MinorFaults: 100}, ""},
		{[]int{10, 20}, Usage{CPU: 503500, MinorFaults: 107}, ""},
		{nil, Usage{}, ""},
		{[]int{30}, Usage{}, "process 30: unreadable"},
		{[]int{10, 40}, Usage{}, "process 40:"},
	} {
		got, err := ReadUsage(tc.pids)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ReadUsage(%v) = %+v, %v; want error %q", tc.pids, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ReadUsage(%v) = %+v, %v; want %+v", tc.pids, got, err, tc.want)
		}
	}
	if d := (Usage{CPU: 9, MinorFaults: 4}).Sub(Usage{CPU: 2, MinorFaults: 1}); d != (Usage{CPU: 7, MinorFaults: 3}) {
		t.Errorf("Sub = %+v", d)
	}
}
