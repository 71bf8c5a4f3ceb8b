package result

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func TestCheckSchema(t *testing.T) {
	cases := []struct {
		v       string
		wantErr string
	}{
		{"apiconform.io/result/v1", ""},
		{"apiconform.io/result/v1beta1", ""},
		{"apiconform.io/result/v1.3", ""},
		{"apiconform.io/result/v2", "not supported"},
		{"apiconform.io/result/v10", "not supported"},
		{"example.com/other/v1", "unknown result schema"},
		{"", "unknown result schema"},
	}
	for _, tc := range cases {
		err := CheckSchema(tc.v)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("CheckSchema(%q) = %v, want nil", tc.v, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("CheckSchema(%q) = %v, want error containing %q", tc.v, err, tc.wantErr)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	in := Result{
		SchemaVersion: SchemaVersion,
		Target:        Target{Name: "t", Server: "http://127.0.0.1:1", Version: "v1.36.0", Capabilities: map[string]bool{"watchList": true}},
		StartedAt:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration:      Duration(1500 * time.Millisecond),
		Specs: []SpecResult{{Name: "a spec", Area: "watch", Requirements: []string{"W-1"}, Outcome: Failed,
			Duration: Duration(time.Millisecond), Failure: &Failure{Message: "boom", Location: "x.go:1"},
			Exchanges: []Exchange{{Method: "GET", URL: "/api", Status: 200, RequestHeaders: []Header{{Name: "Accept", Value: "*/*"}}}}}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"duration": "1.5s"`) {
		t.Errorf("duration not written as text:\n%s", buf.String())
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Target.Name != "t" || out.Duration != in.Duration || !out.StartedAt.Equal(in.StartedAt) ||
		len(out.Specs) != 1 || out.Specs[0].Failure.Message != "boom" || out.Specs[0].Exchanges[0].RequestHeaders[0].Value != "*/*" ||
		!out.Target.Capabilities["watchList"] {
		t.Errorf("round trip lost data: %+v", out)
	}
}

func TestReadRejects(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"not json", "hello", "not an apiconform result"},
		{"no schema", `{"target":{}}`, "no schemaVersion"},
		{"future major", `{"schemaVersion":"apiconform.io/result/v2","specs":[]}`, "not supported"},
		{"bad outcome", `{"schemaVersion":"apiconform.io/result/v1","specs":[{"name":"x","outcome":"maybe"}]}`, "unknown outcome"},
		{"bad duration", `{"schemaVersion":"apiconform.io/result/v1","duration":"soon"}`, "duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestReadRedacts(t *testing.T) {
	doc := `{"schemaVersion":"apiconform.io/result/v1","target":{"name":"x","server":"https://u:pw123@h"},
	"specs":[{"name":"s","outcome":"failed","failure":{"message":"token: abc123"},
	"exchanges":[{"method":"GET","url":"/","status":401,"requestHeaders":[{"name":"Authorization","value":"Bearer sekret-sekret"}]}]}]}`
	r, err := Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"pw123", "abc123", "sekret-sekret"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("%q survived Read+Write:\n%s", secret, buf.String())
		}
	}
}

// exchangeValue mimics a framework's own exchange type, nested request/response.
type exchangeValue struct {
	Request struct {
		Method  string     `json:"method"`
		URL     string     `json:"url"`
		Headers httpHeader `json:"headers"`
	} `json:"request"`
	Response struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	} `json:"response"`
}

type httpHeader map[string][]string

// frameworkExchange has the shape suites/framework records (singular header
// maps, a transport error, nanosecond duration).
type frameworkExchange struct {
	Method         string              `json:"method"`
	URL            string              `json:"url"`
	RequestHeader  map[string][]string `json:"requestHeader,omitempty"`
	Status         int                 `json:"status,omitempty"`
	ResponseHeader map[string][]string `json:"responseHeader,omitempty"`
	ResponseBody   string              `json:"responseBody,omitempty"`
	Error          string              `json:"error,omitempty"`
	Duration       time.Duration       `json:"duration"`
}

func TestExchangesFromFrameworkEntry(t *testing.T) {
	value := []frameworkExchange{
		{Method: "GET", URL: "/api/v1/pods", RequestHeader: map[string][]string{"Authorization": {"Bearer abcdefghijk"}},
			Status: 200, ResponseHeader: map[string][]string{"Content-Type": {"application/json"}}, ResponseBody: "{}", Duration: time.Second},
		{Method: "GET", URL: "/api/v1/watch", Error: "connection reset"},
	}
	// In-process (raw value) and rehydrated from JSON (parallel runs) must agree.
	direct := exchangesFromEntry(types.ReportEntry{Name: "apiconform.exchanges", Value: types.WrapEntryValue(value)})
	wrapped, err := types.WrapEntryValue(value).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rehydrated types.ReportEntryValue
	if err := rehydrated.UnmarshalJSON(wrapped); err != nil {
		t.Fatal(err)
	}
	fromJSON := exchangesFromEntry(types.ReportEntry{Name: "apiconform.exchanges", Value: rehydrated})
	for name, got := range map[string][]Exchange{"direct": direct, "json": fromJSON} {
		if len(got) != 2 {
			t.Fatalf("%s: %d exchanges, want 2", name, len(got))
		}
		if got[0].Status != 200 || len(got[0].RequestHeaders) != 1 || got[0].ResponseHeaders[0].Value != "application/json" || got[0].ResponseBody != "{}" {
			t.Errorf("%s: first exchange %+v", name, got[0])
		}
		if !strings.Contains(got[1].Note, "connection reset") {
			t.Errorf("%s: transport error lost: %+v", name, got[1])
		}
	}
}

func TestFromGinkgo(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	nested := exchangeValue{}
	nested.Request.Method = "GET"
	nested.Request.URL = "http://127.0.0.1/api/v1/pods"
	nested.Request.Headers = httpHeader{"authorization": {"Bearer abcdefghijkl"}, "accept": {"application/json"}}
	nested.Response.StatusCode = 410
	nested.Response.Body = `{"kind":"Status","reason":"Expired"}`
	report := types.Report{
		StartTime: start,
		RunTime:   3 * time.Second,
		SpecReports: types.SpecReports{
			{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
			{ContainerHierarchyTexts: []string{"paging"}, ContainerHierarchyLabels: [][]string{{"area:paging"}},
				LeafNodeType: types.NodeTypeIt, LeafNodeText: "expired token", LeafNodeLabels: []string{"req:PAGE-410", "req:PAGE-410", "req:PAGE-X"},
				State: types.SpecStateFailed, RunTime: 2 * time.Second,
				Failure: types.Failure{Message: "expected 410", Location: types.CodeLocation{FileName: "p.go", LineNumber: 9}},
				ReportEntries: types.ReportEntries{
					{Name: "exchange", Value: types.WrapEntryValue(nested)},
					{Name: "exchange", Value: types.WrapEntryValue(Exchange{Method: "POST", URL: "/x", Status: 201})},
					{Name: "note", Value: types.WrapEntryValue("just text")},
				}},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "bookmarks", LeafNodeLabels: []string{"req:W-B", "area:watch"},
				State: types.SpecStateSkipped, NumAttempts: 1, Failure: types.Failure{Message: "no bookmarks"}},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "filtered", LeafNodeLabels: []string{"req:W-C", "area:watch"}, State: types.SpecStateSkipped},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "ok", LeafNodeLabels: []string{"req:W-A", "area:watch"}, State: types.SpecStatePassed},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "boom", LeafNodeLabels: []string{"area:watch"}, State: types.SpecStatePanicked,
				Failure: types.Failure{Message: "Test Panicked", ForwardedPanic: "nil map"}},
			{LeafNodeType: types.NodeTypeAfterSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "cleanup failed"}},
		},
	}
	r := FromGinkgo(report, Target{Name: "ref"})
	if r.SchemaVersion != SchemaVersion || !r.StartedAt.Equal(start) || r.Duration.Std() != 3*time.Second {
		t.Fatalf("header wrong: %+v", r)
	}
	if len(r.Specs) != 5 {
		t.Fatalf("got %d specs, want 5 (passing BeforeSuite and the filtered spec dropped): %+v", len(r.Specs), r.Specs)
	}
	p := r.Specs[0]
	if p.Name != "paging expired token" || p.Area != "paging" || strings.Join(p.Requirements, ",") != "PAGE-410,PAGE-X" ||
		p.Outcome != Failed || p.Failure.Location != "p.go:9" || p.Duration.Std() != 2*time.Second {
		t.Errorf("failed spec wrong: %+v", p)
	}
	if len(p.Exchanges) != 2 {
		t.Fatalf("want 2 exchanges, got %+v", p.Exchanges)
	}
	x := p.Exchanges[0]
	if x.Method != "GET" || x.Status != 410 || !strings.Contains(x.ResponseBody, "Expired") || len(x.RequestHeaders) != 2 {
		t.Errorf("nested exchange wrong: %+v", x)
	}
	for _, h := range x.RequestHeaders {
		if h.Name == "Authorization" && h.Value != "[REDACTED]" {
			t.Errorf("authorization not redacted: %+v", h)
		}
	}
	if p.Exchanges[1].Method != "POST" || p.Exchanges[1].Status != 201 {
		t.Errorf("direct exchange wrong: %+v", p.Exchanges[1])
	}
	if s := r.Specs[1]; s.Outcome != Skipped || s.SkipReason != "no bookmarks" || s.Area != "watch" {
		t.Errorf("skipped spec wrong: %+v", s)
	}
	for _, s := range r.Specs {
		if s.Name == "filtered" {
			t.Errorf("a spec the filters excluded must not appear: %+v", s)
		}
	}
	if s := r.Specs[2]; s.Outcome != Passed || s.Failure != nil {
		t.Errorf("passed spec wrong: %+v", s)
	}
	if s := r.Specs[3]; s.Outcome != Failed || !strings.Contains(s.Failure.Message, "nil map") || len(s.Requirements) != 0 {
		t.Errorf("panicked spec wrong: %+v", s)
	}
	if s := r.Specs[4]; s.Outcome != Failed || s.Area != "suite" || !strings.HasPrefix(s.Name, "AfterSuite") {
		t.Errorf("suite failure wrong: %+v", s)
	}
	if c := r.Counts(); c != (Counts{Passed: 1, Failed: 3, Skipped: 1}) {
		t.Errorf("counts = %+v", c)
	}
}
