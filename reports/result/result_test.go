package result

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/reports/redact/redacttest"
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
			Exchanges:    []Exchange{{Method: "GET", URL: "/api", Status: 200, RequestHeaders: []Header{{Name: "Accept", Value: "*/*"}}}},
			Observations: []Observation{{Name: "410", Text: "410 Expired: too old"}}}},
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
		!out.Target.Capabilities["watchList"] || !reflect.DeepEqual(out.Specs[0].Observations, in.Specs[0].Observations) {
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

func TestExchangesEntryRoundTrip(t *testing.T) {
	xs := []Exchange{
		{Method: "GET", URL: "/api/v1/pods", RequestHeaders: []Header{{Name: "Accept", Value: "application/json"}},
			Status: 200, ResponseHeaders: []Header{{Name: "Content-Type", Value: "application/json"}}, ResponseBody: "{}"},
		{Method: "GET", URL: "/api/v1/watch", Note: "transport error: connection reset"},
	}
	entry := types.ReportEntry{Name: ExchangesEntry, Value: types.WrapEntryValue(ExchangesEntryValue(xs))}
	// In-process (raw value) and rehydrated from JSON (parallel Ginkgo) must agree.
	wrapped, err := entry.Value.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rehydrated types.ReportEntryValue
	if err := rehydrated.UnmarshalJSON(wrapped); err != nil {
		t.Fatal(err)
	}
	other := types.ReportEntry{Name: "note", Value: types.WrapEntryValue("just text")}
	for name, e := range map[string]types.ReportEntry{"direct": entry, "json": {Name: ExchangesEntry, Value: rehydrated}} {
		got := exchangesFromEntries(types.ReportEntries{other, e})
		if !reflect.DeepEqual(got, xs) {
			t.Errorf("%s: got %+v, want %+v", name, got, xs)
		}
	}
	bad := types.ReportEntry{Name: ExchangesEntry, Value: types.WrapEntryValue("not json")}
	if got := exchangesFromEntries(types.ReportEntries{bad}); len(got) != 1 || !strings.Contains(got[0].Note, "unreadable") {
		t.Errorf("malformed entry: got %+v, want one note", got)
	}
}

func TestFromGinkgo(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	recorded := []Exchange{
		{Method: "GET", URL: "http://127.0.0.1/api/v1/pods", RequestHeaders: []Header{{Name: "Accept", Value: "application/json"}},
			Status: 410, ResponseBody: `{"kind":"Status","reason":"Expired"}`},
		{Method: "POST", URL: "/x", Status: 201},
	}
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
					{Name: ExchangesEntry, Value: types.WrapEntryValue(ExchangesEntryValue(recorded))},
					{Name: "note", Value: types.WrapEntryValue("just text")},
					{Name: ObservationEntryName("410"), Value: types.WrapEntryValue("410 Expired: too old")},
				}},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "bookmarks", LeafNodeLabels: []string{"req:W-B", "area:watch"},
				State: types.SpecStateSkipped, NumAttempts: 1, Failure: types.Failure{Message: "no bookmarks"}},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "filtered", LeafNodeLabels: []string{"req:W-C", "area:watch"}, State: types.SpecStateSkipped},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "ok", LeafNodeLabels: []string{"req:W-A", "area:watch"}, State: types.SpecStatePassed,
				ReportEntries: types.ReportEntries{
					{Name: ObservationEntryName("Any"), Value: types.WrapEntryValue("served 4; latest is 5")},
					{Name: VerdictEntry, Value: types.WrapEntryValue("not an observation")},
					{Name: ObservationEntryName("calls"), Value: types.WrapEntryValue(3)},
				}},
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
	if !reflect.DeepEqual(p.Exchanges, recorded) {
		t.Errorf("exchanges = %+v, want %+v", p.Exchanges, recorded)
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
	// Observations: the spec's, in its order, whatever the outcome; other
	// entries ("note", the verdict) are not observations.
	wantSeen := [][]Observation{
		{{Name: "410", Text: "410 Expired: too old"}},
		nil,
		{{Name: "Any", Text: "served 4; latest is 5"}, {Name: "calls", Text: "3"}},
	}
	for i, want := range wantSeen {
		if got := r.Specs[i].Observations; !reflect.DeepEqual(got, want) {
			t.Errorf("spec %d observations = %+v, want %+v", i, got, want)
		}
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

// TestRedactedRemovesEverySecretFromEveryField plants every kind of secret
// (redacttest) in every field of an exchange and checks that the one
// redaction function leaves none in the encoded entry value.
func TestRedactedRemovesEverySecretFromEveryField(t *testing.T) {
	hdr := http.Header{
		"Authorization":       {"Bearer sk-bearer-SECRET-0001"},
		"Cookie":              {"session=cookie-SECRET-0002"},
		"Proxy-Authorization": {"Basic proxy-SECRET-0003"},
		"X-Leak":              {redacttest.Leak},
		redacttest.Leak:       {"name"},
	}
	x := Exchange{
		Method:          redacttest.Leak,
		URL:             "https://admin:password-SECRET-0007@127.0.0.1/api?access_token=kubeconfig-token-SECRET-0005&" + redacttest.Leak,
		RequestHeaders:  HeadersOf(hdr),
		RequestBody:     redacttest.Leak,
		Status:          200,
		ResponseHeaders: append(HeadersOf(hdr), Header{Name: "Set-Cookie", Value: "s=cookie-SECRET-0002"}),
		ResponseBody:    redacttest.SecretBody + redacttest.Leak,
		Note:            redacttest.Leak,
	}
	planted := ExchangesEntryValue([]Exchange{x})
	for _, s := range redacttest.Secrets {
		if !strings.Contains(planted, s) {
			t.Fatalf("fixture lacks %q", s)
		}
	}
	text := ExchangesEntryValue([]Exchange{x.Redacted()})
	for _, s := range redacttest.Secrets {
		if strings.Contains(text, s) {
			t.Errorf("redacted exchange still contains %q:\n%s", s, text)
		}
	}
	if !strings.Contains(text, "REDACTED") {
		t.Errorf("no redaction marker:\n%s", text)
	}
	if again := x.Redacted().Redacted(); !reflect.DeepEqual(again, x.Redacted()) {
		t.Errorf("Redacted is not idempotent")
	}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Result{Target: Target{Name: "t"}, StartedAt: t0.Add(time.Second), Specs: []SpecResult{{Name: "a"}}}
	b := Result{Target: Target{Name: "t"}, StartedAt: t0, Specs: []SpecResult{{Name: "b"}, {Name: "c"}}}
	m := Merge(a, b)
	if m.Target.Name != "t" || !m.StartedAt.Equal(t0) || len(m.Specs) != 3 || m.Specs[0].Name != "a" || m.Specs[2].Name != "c" {
		t.Errorf("Merge = %+v", m)
	}
	if len(a.Specs) != 1 {
		t.Errorf("Merge changed its first part: %+v", a)
	}
	if e := Merge(); e.Specs == nil || e.SchemaVersion != SchemaVersion {
		t.Errorf("Merge() = %+v", e)
	}
}
