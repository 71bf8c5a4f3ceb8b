package render

import (
	"strings"
	"testing"

	"github.com/apiconform/apiconform/reports/result"
)

func TestElideManagedFields(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"metadata":{"name":"a","managedFields":[{"manager":"x","fieldsV1":{"f:data":{}}},{"manager":"y"}]},"data":{}}`,
			`{"metadata":{"name":"a","managedFields": ["… 2 managedFields entries elided"]},"data":{}}`},
		{`{"managedFields":[]}`, `{"managedFields": ["… 0 managedFields entries elided"]}`},
		// Strings with brackets and escaped quotes inside do not end the array.
		{`{"managedFields":[{"m":"a]\"}["}],"x":1}`, `{"managedFields": ["… 1 managedFields entries elided"],"x":1}`},
		// A body the recorder cut short: elided to the end.
		{`{"metadata":{"managedFields":[{"manager":"x"},{"mana`, `{"metadata":{"managedFields": ["… 2 managedFields entries elided"]`},
		// The word alone, not a key with an array, stays.
		{`{"message":"\"managedFields\" is forbidden"}`, `{"message":"\"managedFields\" is forbidden"}`},
		{`no json at all`, `no json at all`},
	} {
		if got := elideManagedFields(tc.in); got != tc.want {
			t.Errorf("elideManagedFields(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestShownBody(t *testing.T) {
	body := `{"kind":"ConfigMap","metadata":{"managedFields":[{"manager":"x"}]}}`
	got := shownBody(body, false, 0)
	if !strings.Contains(got, "\n  \"kind\": \"ConfigMap\"") || strings.Contains(got, `"manager"`) {
		t.Errorf("shownBody did not indent and elide:\n%s", got)
	}
	if kept := shownBody(body, true, 0); !strings.Contains(kept, `"manager": "x"`) {
		t.Errorf("keep=true elided managedFields:\n%s", kept)
	}
	long := shownBody(strings.Repeat("é", 3000), false, 1001)
	if !strings.HasPrefix(long, strings.Repeat("é", 500)+"\n… (") || !strings.Contains(long, "more bytes") {
		t.Errorf("cut body: %.60q…", long)
	}
}

func TestExchangeGroupsAndVerdict(t *testing.T) {
	xs := []result.Exchange{{URL: "setup", Role: result.Setup}, {URL: "step"}, {URL: "decisive", Role: result.Decisive}, {URL: "teardown", Role: result.Teardown}}
	main, aside := exchangeGroups(xs)
	var order []string
	for _, x := range append(main, aside...) {
		order = append(order, x.URL)
	}
	if got := strings.Join(order, ","); got != "decisive,step,setup,teardown" {
		t.Errorf("order %s", got)
	}
	s := result.SpecResult{Requirements: []string{"A", "B"}, Outcome: result.Failed,
		Failure: &result.Failure{Message: "Expected\n   <int>: 1\nto equal 2"}}
	if got := verdictLine(s); got != "A, B: Expected" {
		t.Errorf("fallback verdict %q", got)
	}
	s.Verdict = "expected 410 Gone, got 200 OK (GET /x)"
	if got := verdictLine(s); got != "A, B: expected 410 Gone, got 200 OK (GET /x)" {
		t.Errorf("verdict %q", got)
	}
	s.Outcome, s.Verdict = result.Errored, "transport error: reset"
	if got := verdictLine(s); got != "A, B: error: transport error: reset" {
		t.Errorf("error verdict %q", got)
	}
}

// However many specs fail, the summary stays under its limit and says how
// many lines it left out.
func TestSummaryBounded(t *testing.T) {
	r := failingResult(3000)
	rep := buildSample(r)
	var b strings.Builder
	if err := WriteSummary(&b, rep, SummaryOptions{Reports: []string{"out/report.html"}}); err != nil {
		t.Fatal(err)
	}
	if n := b.Len(); n >= MaxSummaryBytes {
		t.Errorf("summary of 3000 failures is %d bytes", n)
	}
	if !strings.Contains(b.String(), "more: see the full report") || !strings.HasSuffix(b.String(), "Full report: `out/report.html`.\n") {
		t.Errorf("summary does not end with the rest count and the report path:\n%s", b.String()[b.Len()-400:])
	}
}
