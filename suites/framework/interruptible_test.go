package framework

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// interruptChildEnv makes the test binary the child of
// TestInterruptDuringSetupEndsTheRunCleanly.
const interruptChildEnv = "APICONFORM_TEST_INTERRUPT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(interruptChildEnv) == "1" {
		os.Exit(interruptChild())
	}
	os.Exit(m.Run())
}

// interruptChild runs one spec whose setup interrupts its own process and
// then, as New's BeforeEach does, registers a cleanup. It exits 3 when
// Ginkgo reports the run interrupted, 0 or 2 otherwise; Ginkgo itself exits
// 1 when the cleanup is registered from a node it has abandoned.
func interruptChild() int {
	ginkgo.Describe("interrupted", func() {
		ginkgo.BeforeEach(func() {
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
			time.Sleep(300 * time.Millisecond) // the interrupt is handled meanwhile
			ginkgo.DeferCleanup(func() {})
		})
		ginkgo.It("never runs", func() {})
	})
	var report types.Report
	ginkgo.ReportAfterSuite("", func(r types.Report) { report = r })
	sc, rc := ginkgo.GinkgoConfiguration()
	rc.NoColor = true
	ginkgo.RunSpecs(childT{}, "interrupt", sc, rc)
	time.Sleep(500 * time.Millisecond) // an abandoned node would reach DeferCleanup now
	for _, r := range report.SpecialSuiteFailureReasons {
		if strings.Contains(r, "Interrupted") {
			return 3
		}
	}
	return 2
}

// childT is the GinkgoTestingT Ginkgo needs outside go test's own T.
type childT struct{}

func (childT) Fail() {}

// TestInterruptDuringSetupEndsTheRunCleanly interrupts a run while a setup
// node runs. The node must be waited for, not abandoned: abandoned, its
// DeferCleanup makes Ginkgo exit the process with code 1, and an
// interrupted run reads as a failed one.
func TestInterruptDuringSetupEndsTheRunCleanly(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), interruptChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 3 || strings.Contains(string(out), "DeferCleanup must be called") {
		t.Fatalf("exit code %d, want 3 (interrupted, setup waited for); output:\n%s", code, out)
	}
}

func TestInterruptibleWrapsOnlySpecBodies(t *testing.T) {
	body := func() {}
	report := func(types.SpecReport) {}
	for _, tc := range []struct {
		nt   types.NodeType
		args []any
		want []bool // per arg: replaced by a func(SpecContext)
	}{
		{types.NodeTypeIt, []any{body}, []bool{true}},
		{types.NodeTypeIt, []any{ginkgo.Label("x"), body}, []bool{false, true}},
		{types.NodeTypeBeforeEach, []any{body}, []bool{true}},
		{types.NodeTypeJustBeforeEach, []any{body}, []bool{true}},
		{types.NodeTypeAfterEach, []any{body}, []bool{true}},
		{types.NodeTypeBeforeAll, []any{body}, []bool{true}},
		{types.NodeTypeIt, []any{func(ginkgo.SpecContext) {}}, []bool{true}},
		{types.NodeTypeContainer, []any{body}, []bool{false}},
		{types.NodeTypeBeforeSuite, []any{body}, []bool{false}},
		{types.NodeTypeReportAfterEach, []any{report}, []bool{false}},
	} {
		_, got, errs := interruptible(tc.nt, 0, "t", tc.args)
		if len(errs) > 0 || len(got) != len(tc.args) {
			t.Fatalf("%v: args %d → %d, errs %v", tc.nt, len(tc.args), len(got), errs)
		}
		for i, a := range got {
			_, isCtx := a.(func(ginkgo.SpecContext))
			if isCtx != tc.want[i] {
				t.Errorf("%v arg %d: takes a SpecContext = %v, want %v", tc.nt, i, isCtx, tc.want[i])
			}
		}
	}
}
