package compat

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apiconform/apiconform/spec/openapi"
)

// releasesDir holds versions.txt, expected.txt and fetch.sh.
const releasesDir = "../releases"

// releaseCache is where spec/releases/fetch.sh (make releases) puts the documents.
func releaseCache() string {
	if d := os.Getenv("APICONFORM_RELEASES"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "apiconform", "releases")
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" && (!strings.HasPrefix(line, "#") || strings.HasPrefix(line, "## ")) {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedFindings reads expected.txt: "## OLD -> NEW" sections of "LEVEL RULE LOCATION" lines.
func expectedFindings(t *testing.T) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	pair := ""
	for _, line := range readLines(t, filepath.Join(releasesDir, "expected.txt")) {
		if rest, ok := strings.CutPrefix(line, "## "); ok {
			pair = strings.Join(strings.Fields(rest), " ")
			out[pair] = map[string]bool{}
			continue
		}
		fields := strings.Fields(line)
		if pair == "" || len(fields) != 3 {
			t.Fatalf("expected.txt: %q: want LEVEL RULE LOCATION under a ## OLD -> NEW heading", line)
		}
		if _, err := openapi.ParseLevel(fields[0]); err != nil {
			t.Fatalf("expected.txt: %q: %v", line, err)
		}
		if _, ok := registry[fields[1]]; !ok {
			t.Fatalf("expected.txt: %q: unknown rule", line)
		}
		out[pair][line] = true
	}
	return out
}

func levelCounts(set map[string]bool) (errs, warns, infos int) {
	for k := range set {
		switch strings.Fields(k)[0] {
		case "error":
			errs++
		case "warning":
			warns++
		default:
			infos++
		}
	}
	return
}

// TestReleaseHistory compares compat on the published OpenAPI documents of each
// consecutive pair of releases with the truth kept in spec/releases/expected.txt.
func TestReleaseHistory(t *testing.T) {
	versions := readLines(t, filepath.Join(releasesDir, "versions.txt"))
	expected := expectedFindings(t)
	cache := releaseCache()
	for _, v := range versions {
		if _, err := os.Stat(filepath.Join(cache, v, "swagger.json")); err != nil {
			t.Skipf("release documents not cached in %s (run `make releases`, which runs spec/releases/fetch.sh): %v", cache, err)
		}
	}
	var table strings.Builder
	table.WriteString("| Pair | Document | Errors (expected/found) | Warnings (expected/found) | Info (expected/found) | Missed | Unexpected |\n|---|---|---|---|---|---|---|\n")
	type form struct{ name, path, extra string }
	forms := []form{{"swagger.json", "swagger.json", ""}}
	// The v3 documents are four times the bytes of swagger.json; `make releases`
	// compares them (without the race detector), `make test` compares swagger.json.
	if os.Getenv("APICONFORM_RELEASES_V3") != "" {
		forms = append(forms, form{"v3/", "v3", " (v3 extra)"})
	} else {
		t.Log("OpenAPI v3 documents not compared: set APICONFORM_RELEASES_V3=1 (make releases does)")
	}
	for _, form := range forms {
		docs := loadReleases(t, cache, versions, form.path)
		for i := 1; i < len(versions); i++ {
			pair := versions[i-1] + " -> " + versions[i]
			want, ok := expected[pair]
			extra, okExtra := expected[pair+form.extra]
			if !ok || !okExtra {
				t.Errorf("expected.txt has no section ## %s%s", pair, form.extra)
				continue
			}
			if form.extra != "" {
				want = union(want, extra)
			}
			row := comparePair(t, pair+" ("+form.name+")", Compare(docs[i-1], docs[i]), want)
			fmt.Fprintf(&table, "| %s | %s | %s\n", pair, form.name, row)
		}
	}
	t.Logf("release history:\n%s", table.String())
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// loadReleases loads each release's document once, in parallel; each serves two pairs.
func loadReleases(t *testing.T, cache string, versions []string, path string) []*openapi.Document {
	t.Helper()
	docs := make([]*openapi.Document, len(versions))
	errs := make([]error, len(versions))
	var wg sync.WaitGroup
	for i, v := range versions {
		wg.Go(func() { docs[i], errs[i] = openapi.Load(filepath.Join(cache, v, path)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("load %s %s: %v", versions[i], path, err)
		}
	}
	return docs
}

// comparePair reports every difference between a pair's findings and the truth,
// and returns the counts as the rest of a table row.
func comparePair(t *testing.T, pair string, r *openapi.Report, want map[string]bool) string {
	t.Helper()
	{
		got := map[string]bool{}
		for _, f := range r.Findings {
			got[fmt.Sprintf("%s %s %s", f.Level, f.Rule, f.Location())] = true
		}
		var missed, unexpected []string
		for k := range want {
			if !got[k] {
				missed = append(missed, k)
			}
		}
		for k := range got {
			if !want[k] {
				unexpected = append(unexpected, k)
			}
		}
		sort.Strings(missed)
		sort.Strings(unexpected)
		for _, k := range missed {
			t.Errorf("%s: expected finding not reported: %s", pair, k)
		}
		for _, k := range unexpected {
			if strings.HasPrefix(k, "error ") {
				t.Errorf("%s: false error (not in expected.txt): %s", pair, k)
			} else {
				t.Errorf("%s: finding not in expected.txt: %s", pair, k)
			}
		}
		we, ww, wi := levelCounts(want)
		ge, gw, gi := levelCounts(got)
		return fmt.Sprintf("%d/%d | %d/%d | %d/%d | %d | %d |", we, ge, ww, gw, wi, gi, len(missed), len(unexpected))
	}
}
