// Command screenshot renders the sample comparison report to HTML and takes a
// PNG of it with headless Chromium: `go run ./reports/cmd/screenshot OUT.png`
// (the Makefile's report-screenshot target).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/internal/chromium"
	"github.com/apiconform/apiconform/reports/render"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/reports/sample"
)

func main() {
	width := flag.Int("width", 1280, "window width in pixels")
	height := flag.Int("height", 2400, "window height in pixels")
	fragment := flag.String("fragment", "", "URL fragment to apply as a filter, e.g. outcome=fail")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: screenshot [flags] OUT.png [RESULT.json...]\n"+
			"Renders the given results (or a built-in sample) to HTML and screenshots it.\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *width, *height, *fragment); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out string, inputs []string, width, height int, fragment string) error {
	results := []result.Result{sample.RefServer(), sample.KubeAPIServer()}
	cat := sample.Catalogue()
	if len(inputs) > 0 {
		results = results[:0]
		for _, p := range inputs {
			r, err := result.ReadFile(p)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
		cat = reports.FromCatalog()
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "apiconform-screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		return err
	}
	if err := render.WriteHTML(f, reports.Build(cat, results...)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	u, err := chromium.FileURL(page, fragment)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := chromium.Screenshot(ctx, u, out, width, height); err != nil {
		return err
	}
	fmt.Println("wrote", out)
	return nil
}
