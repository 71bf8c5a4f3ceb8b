package framework

import (
	"errors"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

func TestSelectedBy(t *testing.T) {
	n := &need{labels: []string{"area:paging", "req:PAGE-CONTINUE-EXPIRED-410"},
		text: "chunked lists answers 410 Gone to an expired continue token"}
	for _, tc := range []struct {
		name        string
		filter      string
		focus, skip []string
		want        bool
	}{
		{name: "everything", want: true},
		{name: "its area", filter: "(area:paging)", want: true},
		{name: "its requirement", filter: "(area:watch || req:PAGE-CONTINUE-EXPIRED-410)", want: true},
		{name: "another area", filter: "(area:watch)"},
		{name: "its area skipped", filter: "!(area:paging)"},
		{name: "focus matches", focus: []string{"expired continue"}, want: true},
		{name: "focus misses", focus: []string{"bookmark"}},
		{name: "skip matches", skip: []string{"410 Gone"}},
		{name: "a bad filter takes everything", filter: "((", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := types.SuiteConfig{LabelFilter: tc.filter, FocusStrings: tc.focus, SkipStrings: tc.skip}
			if got := selectedBy(sc)(n); got != tc.want {
				t.Errorf("selected = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCaptureFailures(t *testing.T) {
	gomega.RegisterFailHandler(func(msg string, _ ...int) { t.Errorf("a failure escaped: %s", msg) })
	for _, tc := range []struct {
		name string
		fn   func()
		want string // "" = no error
	}{
		{name: "clean", fn: func() {}},
		{name: "gomega", fn: func() { gomega.Expect(1).To(gomega.Equal(2), "one is not two") }, want: "one is not two"},
		{name: "verdict", fn: func() { Verify(nil, false, "a verdict of %d", 7) }, want: "a verdict of 7"},
		{name: "transport", fn: func() { failTransport("GET /x", errors.New("connection refused"), 0) },
			want: "harness error, not a conformance failure: GET /x: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			err := captureFailures(func() { tc.fn(); ran = true })
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tc.want == "" && !ran:
				t.Fatal("fn did not run to its end")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			case tc.want != "" && ran:
				t.Fatal("fn went on after its failure")
			}
			if preparing() != nil {
				t.Fatal("the failure hook outlived captureFailures")
			}
		})
	}
}

func TestCaptureFailuresPassesOtherPanicsOn(t *testing.T) {
	defer func() {
		if e := recover(); e != "boom" {
			t.Fatalf("recovered %v, want the original panic", e)
		}
		if preparing() != nil {
			t.Fatal("the failure hook outlived captureFailures")
		}
	}()
	_ = captureFailures(func() { panic("boom") })
}
