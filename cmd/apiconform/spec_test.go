package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/catalog"
)

func TestRunSpec(t *testing.T) {
	tests := []struct {
		name     string
		opts     specOptions
		wantErr  string
		contains []string
		excludes []string
	}{
		{name: "md all", opts: specOptions{format: "md"},
			contains: []string{"## paging", "## resourceversion", "## watch", "| RV-LIST-EXACT-NOLIMIT-NORV | MUST |", "## Table: resourceVersionMatch and paging parameters for list", "| `resourceVersionMatch=Exact` | _limit unset_ | Invalid (RV-LIST-EXACT-NOLIMIT-NORV)"}},
		{name: "md area", opts: specOptions{format: "md", area: "paging"},
			contains: []string{"## paging", "PAGE-LIMIT"}, excludes: []string{"## watch", "## Table"}},
		{name: "md level", opts: specOptions{format: "md", level: "may"},
			contains: []string{"RV-GONE-410", "WATCH-BOOKMARK-OPTIONAL"}, excludes: []string{"| MUST |", "| SHOULD |"}},
		{name: "bad level", opts: specOptions{format: "md", level: "sometimes"}, wantErr: "--level"},
		{name: "bad area", opts: specOptions{format: "md", area: "nope"}, wantErr: "--area"},
		{name: "bad format", opts: specOptions{format: "xml"}, wantErr: "--format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runSpec(&out, &tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q", s)
				}
			}
			for _, s := range tt.excludes {
				if strings.Contains(out.String(), s) {
					t.Errorf("output has %q", s)
				}
			}
		})
	}
}

func TestRunSpecJSONIsTheCatalogue(t *testing.T) {
	var out bytes.Buffer
	if err := runSpec(&out, &specOptions{format: "json"}); err != nil {
		t.Fatal(err)
	}
	var got specOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if len(got.Requirements) != len(catalog.All()) || len(got.Tables) != len(catalog.Tables()) {
		t.Fatalf("got %d requirements and %d tables, want %d and %d", len(got.Requirements), len(got.Tables), len(catalog.All()), len(catalog.Tables()))
	}
	want, _ := catalog.ByID("RV-LIST-UNSET-CONTINUE-RVN")
	for _, r := range got.Requirements {
		if r.ID == want.ID && r.KubeAPIServer != want.KubeAPIServer {
			t.Fatalf("%s round-tripped as %+v", r.ID, r)
		}
	}
}

func TestRunSpecCoverage(t *testing.T) {
	var md bytes.Buffer
	if err := runSpec(&md, &specOptions{format: "md", coverage: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Coverage of the documents", "## 004_e6d3ce6622f9ab07.txt",
		"| Resource versions › Semantics for get and list | covered | ", "RV-LIST-EXACT-LIMIT-RV0",
		"| Units | static | rules duration-seconds |", "| WebSockets and SPDY | untestable |", "| Dry-run › Dry-run authorization | covered | DRYRUN-AUTHORIZATION |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("coverage markdown lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := runSpec(&js, &specOptions{format: "json", coverage: true}); err != nil {
		t.Fatal(err)
	}
	var got coverageOutput
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got.Sections) == 0 || got.Totals["covered"] == 0 {
		t.Fatalf("coverage JSON: %v, %+v", err, got.Totals)
	}
	if err := runSpec(&js, &specOptions{format: "xml", coverage: true}); err == nil {
		t.Fatal("--format xml accepted")
	}
}
