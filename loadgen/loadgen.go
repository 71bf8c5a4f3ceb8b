// Package loadgen drives one bounded, repeatable load against any server that
// speaks the Kubernetes API — writes of every kind, reads, paged and selected
// lists, watch fan-out and custom resources — so the reference server,
// kube-apiserver and a transport ceiling can be measured side by side.
//
// Every phase is bounded in count and by Plan.PhaseTimeout; the load works in
// a namespace of its own, deletes what it made, and deletes the namespace.
package loadgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Plan sizes the load. Zero fields take the defaults of DefaultPlan.
type Plan struct {
	Objects       int           `json:"objects"`       // configmaps created, read, written, listed and deleted
	Concurrency   int           `json:"concurrency"`   // parallel requests in the per-object phases
	PageSize      int           `json:"pageSize"`      // limit of each paged list
	ListRounds    int           `json:"listRounds"`    // full paged walks of the collection
	SelectorLists int           `json:"selectorLists"` // lists with a label selector
	Watchers      int           `json:"watchers"`      // concurrent watches in each watch phase
	WatchEvents   int           `json:"watchEvents"`   // events each fan-out watcher must receive
	CustomObjects int           `json:"customObjects"` // custom resources created and read
	PhaseTimeout  time.Duration `json:"phaseTimeout"`  // deadline of each phase, or of each part of one (Session.StepPart)
	// Phases limits what is reported (and run, beyond what the others need
	// as setup); empty means every phase.
	Phases []string `json:"phases,omitempty"`
}

// DefaultPlan is the load `make bench-compare` drives: sized so three rounds
// against three targets finish in about three minutes on two cores, with
// enough requests in each phase (100 pages, 200 selector lists) that a few
// slow ones on a shared machine do not decide its figure.
var DefaultPlan = Plan{Objects: 1000, Concurrency: 8, PageSize: 500, ListRounds: 50, SelectorLists: 200,
	Watchers: 100, WatchEvents: 200, CustomObjects: 300, PhaseTimeout: 2 * time.Minute}

// WithDefaults fills zero fields from DefaultPlan.
func (p Plan) WithDefaults() Plan {
	d := DefaultPlan
	for _, f := range []struct{ dst, src *int }{
		{&d.Objects, &p.Objects}, {&d.Concurrency, &p.Concurrency}, {&d.PageSize, &p.PageSize},
		{&d.ListRounds, &p.ListRounds}, {&d.SelectorLists, &p.SelectorLists}, {&d.Watchers, &p.Watchers},
		{&d.WatchEvents, &p.WatchEvents}, {&d.CustomObjects, &p.CustomObjects},
	} {
		if *f.src > 0 {
			*f.dst = *f.src
		}
	}
	if p.PhaseTimeout > 0 {
		d.PhaseTimeout = p.PhaseTimeout
	}
	d.Phases = p.Phases
	return d
}

// Validate reports a plan the load cannot run.
func (p Plan) Validate() error {
	p = p.WithDefaults()
	if p.Objects < shards {
		return fmt.Errorf("objects: want at least %d (one per label shard), got %d", shards, p.Objects)
	}
	if p.Objects > 99999 || p.CustomObjects > 99999 {
		return errors.New("objects and custom objects: at most 99999")
	}
	for _, name := range p.Phases {
		if !slices.Contains(PhaseNames, name) {
			return fmt.Errorf("unknown phase %q (phases: %s)", name, strings.Join(PhaseNames, ", "))
		}
	}
	return nil
}

func (p Plan) reports(phase string) bool {
	return len(p.Phases) == 0 || slices.Contains(p.Phases, phase)
}

// Phase names, in the order Run measures them.
const (
	PhaseCreate        = "create"
	PhaseGet           = "get"
	PhaseUpdate        = "update"
	PhaseMergePatch    = "merge-patch"
	PhaseApply         = "apply"
	PhaseList          = "paged-list"
	PhaseListSelector  = "list-selector"
	PhaseWatch         = "watch-fanout"
	PhaseWatchSelector = "watch-selector"
	PhaseDelete        = "delete"
	PhaseCRCreate      = "cr-create"
	PhaseCRGet         = "cr-get"
)

// PhaseNames lists every phase in run order.
var PhaseNames = []string{PhaseCreate, PhaseGet, PhaseUpdate, PhaseMergePatch, PhaseApply, PhaseList,
	PhaseListSelector, PhaseWatch, PhaseWatchSelector, PhaseDelete, PhaseCRCreate, PhaseCRGet}

// Target is where the load goes: a base URL and a client that authenticates.
type Target struct {
	Name    string
	BaseURL string
	Client  *http.Client
	// Record, when set, keeps the answers this target gives so a Ceiling can
	// replay the same bytes.
	Record *Recording
	// OnPhase, when set, is called as each measured phase starts; the
	// function it returns is called as the phase ends (profiling hooks).
	OnPhase func(phase string) (end func())
	// Processes, when set, are the server's processes on this machine
	// (never this one, the client's): each reported phase then reads the
	// CPU they and the client used (Phase.ServerCPU, Phase.ClientCPU).
	Processes []int
}

// Phase is the measurement of one kind of operation.
type Phase struct {
	Name      string        `json:"name"`
	Ops       int           `json:"ops"`
	Elapsed   time.Duration `json:"elapsed"`
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	OpsPerSec float64       `json:"opsPerSec"`
	// The processor time Target.Processes used during the phase, and the
	// client's (this process), and the server's minor faults; zero when the
	// target's processes are not known.
	ServerCPU         time.Duration `json:"serverCPU,omitempty"`
	ServerMinorFaults int64         `json:"serverMinorFaults,omitempty"`
	ClientCPU         time.Duration `json:"clientCPU,omitempty"`
}

// Result is one target's measurements, in phase order.
type Result struct {
	Target string  `json:"target"`
	Round  int     `json:"round"`
	Proto  string  `json:"proto"` // protocol the target answered with, e.g. HTTP/2.0
	Plan   Plan    `json:"plan"`
	Phases []Phase `json:"phases"`
}

// Run drives the plan against the target and reports each phase.
func Run(ctx context.Context, t Target, plan Plan) (Result, error) {
	s, err := Start(ctx, t, plan)
	if err != nil {
		return Result{}, err
	}
	defer s.Close()
	for _, name := range s.Steps() {
		if err := s.Step(ctx, name); err != nil {
			return s.Result(), err
		}
	}
	return s.Result(), nil
}

// Session is one target's run of a plan taken a step at a time, so that a
// comparison can run each phase on every target back to back: a phase's
// figures on two targets then lie seconds apart rather than a whole run,
// and drift on a shared machine falls on both alike.
type Session struct {
	r     *runner
	res   Result
	steps []step
	next  int
	part  partial // the parts run so far of the step under way
}

type step struct {
	name string
	run  func(context.Context, span) ([]time.Duration, time.Duration, error)
	// ops is how many operations (objects, walks, lists) a step makes,
	// which its parts share (StepPart); nil for a step that runs whole.
	ops func(Plan) int
}

// span is the operations [lo, hi) of a divisible step that one part makes.
type span struct{ lo, hi int }

// whole adapts a step that runs whole, ignoring the span.
func whole(run func(context.Context) ([]time.Duration, time.Duration, error)) func(context.Context, span) ([]time.Duration, time.Duration, error) {
	return func(ctx context.Context, _ span) ([]time.Duration, time.Duration, error) { return run(ctx) }
}

// partial is what the parts of a step run so far measured.
type partial struct {
	of, done       int // parts the step is cut into, and run
	lat            []time.Duration
	elapsed        time.Duration
	server, client Usage
	end            func() // OnPhase's, called after the last part
}

func objects(p Plan) int       { return p.Objects }
func customObjects(p Plan) int { return p.CustomObjects }
func listRounds(p Plan) int    { return p.ListRounds }
func selectorLists(p Plan) int { return p.SelectorLists }

// Start creates the session's namespace (Close deletes it) and plans its
// steps: the reported phases and the setup the later ones need.
func Start(ctx context.Context, t Target, plan Plan) (*Session, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	plan = plan.WithDefaults()
	r := &runner{t: t, plan: plan}
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, err
	}
	r.suffix = hex.EncodeToString(suffix[:])
	r.ns = "ac-load-" + r.suffix
	if err := r.createNamespace(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	crds := plan.reports(PhaseCRCreate) || plan.reports(PhaseCRGet)
	all := []struct {
		step
		need bool // runs even when not reported: later phases depend on it
	}{
		{step{PhaseCreate, r.creates, objects}, true},
		{step{PhaseGet, r.gets, objects}, false},
		{step{PhaseUpdate, r.updates, objects}, false},
		{step{PhaseMergePatch, r.mergePatches, objects}, false},
		{step{PhaseApply, r.applies, objects}, false},
		{step{PhaseList, r.pagedLists, listRounds}, false},
		{step{PhaseListSelector, r.selectorLists, selectorLists}, false},
		{step{PhaseWatch, r.watchFanout, func(p Plan) int { return len(fanoutWrites(p)) }}, false},
		{step{PhaseWatchSelector, r.watchSelector, func(p Plan) int { return len(selectorWrites(p)) }}, false},
		{step{PhaseDelete, r.deletes, objects}, true},
		{step{"crd-setup", whole(r.createCRD), nil}, crds},
		{step{PhaseCRCreate, r.crCreates, customObjects}, crds},
		{step{PhaseCRGet, r.crGets, customObjects}, false},
		{step{"crd-cleanup", whole(r.deleteCRD), nil}, crds},
	}
	s := &Session{r: r, res: Result{Target: t.Name, Plan: plan}}
	for _, c := range all {
		if c.need || s.reported(c.name) {
			s.steps = append(s.steps, c.step)
		}
	}
	return s, nil
}

func (s *Session) reported(name string) bool {
	return slices.Contains(PhaseNames, name) && s.r.plan.reports(name)
}

// Steps names the session's steps in the order they run. Sessions of the
// same plan have the same steps.
func (s *Session) Steps() []string {
	names := make([]string, len(s.steps))
	for i, st := range s.steps {
		names[i] = st.name
	}
	return names
}

// MaxParts is how many parts step name can be run in (StepPart): one per
// operation of a per-object or list step, whose operations the parts
// share; 1 for a step that runs whole (and for a name the plan lacks).
func (s *Session) MaxParts(name string) int {
	i := slices.IndexFunc(s.steps, func(st step) bool { return st.name == name })
	if i < 0 || s.steps[i].ops == nil {
		return 1
	}
	return max(1, s.steps[i].ops(s.r.plan))
}

// Step runs the next step, which must be name: the steps of a plan depend
// on the ones before them.
func (s *Session) Step(ctx context.Context, name string) error {
	return s.StepPart(ctx, name, 0, 1)
}

// StepPart runs part k of n of the next step, which must be name, its parts
// taken in order: a divisible step's operations in n runs of about equal
// share, so a comparison can interleave the parts of two targets and each
// target's figure spans the same stretch of the machine's time. The step's
// figures (latencies, elapsed time, CPU) sum its parts' and are reported
// after the last. A step that runs whole has one part.
func (s *Session) StepPart(ctx context.Context, name string, k, n int) error {
	if s.next >= len(s.steps) || s.steps[s.next].name != name {
		return fmt.Errorf("%s: step %q out of order (%d of %v done)", s.r.t.Name, name, s.next, s.Steps())
	}
	st := s.steps[s.next]
	plan := s.r.plan
	if n > s.MaxParts(name) {
		return fmt.Errorf("%s: step %q runs in at most %d parts, not %d", s.r.t.Name, name, s.MaxParts(name), n)
	}
	if k != s.part.done || (k > 0 && n != s.part.of) || n < 1 {
		return fmt.Errorf("%s: part %d of %d of step %q out of order (%d of %d done)", s.r.t.Name, k+1, n, name, s.part.done, s.part.of)
	}
	reported := s.reported(st.name)
	if k == 0 {
		s.part = partial{of: n}
		if reported && s.r.t.OnPhase != nil {
			s.part.end = s.r.t.OnPhase(st.name)
		}
	}
	var part span
	if st.ops != nil {
		ops := st.ops(plan)
		part = span{lo: k * ops / n, hi: (k + 1) * ops / n}
	}
	pctx, cancel := context.WithTimeout(ctx, plan.PhaseTimeout)
	defer cancel()
	meter := reported && len(s.r.t.Processes) > 0
	lat, elapsed, server, client, err := s.r.measure(pctx, st, part, meter)
	last := k == n-1 || err != nil
	if last && s.part.end != nil {
		s.part.end()
	}
	if err != nil {
		if pctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w (phase deadline %s)", err, plan.PhaseTimeout)
		}
		s.next = len(s.steps) // the later steps need this one
		return fmt.Errorf("%s: %s: %w", s.r.t.Name, st.name, err)
	}
	p := &s.part
	p.done++
	p.lat = append(p.lat, lat...)
	p.elapsed += elapsed
	p.server, p.client = p.server.Add(server), p.client.Add(client)
	if !last {
		return nil
	}
	s.next++
	if reported {
		ph := summarize(st.name, p.lat, p.elapsed)
		if meter {
			ph.ServerCPU, ph.ServerMinorFaults, ph.ClientCPU = p.server.CPU, p.server.MinorFaults, p.client.CPU
		}
		s.res.Phases = append(s.res.Phases, ph)
	}
	s.part = partial{}
	return nil
}

// measure runs part of st, reading before and after it, when meter, the
// CPU the server's processes and the client used.
func (r *runner) measure(ctx context.Context, st step, part span, meter bool) (lat []time.Duration, elapsed time.Duration, server, client Usage, err error) {
	if meter {
		if server, client, err = r.usage(); err != nil {
			return nil, 0, Usage{}, Usage{}, err
		}
	}
	if lat, elapsed, err = st.run(ctx, part); err != nil || !meter {
		return lat, elapsed, Usage{}, Usage{}, err
	}
	server2, client2, err := r.usage()
	if err != nil {
		return nil, 0, Usage{}, Usage{}, err
	}
	return lat, elapsed, server2.Sub(server), client2.Sub(client), nil
}

// usage reads the server's processes and the client's (this one).
func (r *runner) usage() (server, client Usage, err error) {
	if server, err = ReadUsage(r.t.Processes); err != nil {
		return Usage{}, Usage{}, fmt.Errorf("the server's CPU: %w", err)
	}
	if client, err = ReadUsage([]int{os.Getpid()}); err != nil {
		return Usage{}, Usage{}, fmt.Errorf("the client's CPU: %w", err)
	}
	return server, client, nil
}

// Result is what the steps run so far measured.
func (s *Session) Result() Result {
	res := s.res
	res.Phases = slices.Clone(s.res.Phases)
	res.Proto, _ = s.r.proto.Load().(string)
	return res
}

// Close deletes the session's namespace, and a CRD a failed step left.
func (s *Session) Close() {
	s.r.closeWatch()
	s.r.deleteNamespace()
}

type runner struct {
	t      Target
	plan   Plan
	suffix string
	ns     string
	proto  atomic.Value // string
	// crdLeft is set while the run's CRD exists.
	crdLeft bool
	// watch is the watch phase under way, between its parts.
	watch *watchRun
}

// OpHeader names the kind of each request, so a Ceiling can answer it with
// the bytes the reference server gave; real servers ignore it.
// NotifyHeader on a write names the watch op whose watchers it reaches.
const (
	OpHeader     = "X-Apiconform-Load-Op"
	NotifyHeader = "X-Apiconform-Load-Notify"
)

// req is one request of the load.
type req struct {
	op, method, path, contentType, notify string
	body                                  []byte
	want                                  []int // accepted status codes; default 200
}

func (r *runner) send(ctx context.Context, q req) (*http.Response, error) {
	var body io.Reader = http.NoBody
	if q.body != nil {
		body = bytes.NewReader(q.body)
	}
	hr, err := http.NewRequestWithContext(ctx, q.method, r.t.BaseURL+q.path, body)
	if err != nil {
		return nil, err
	}
	if q.body != nil {
		ct := q.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set(OpHeader, q.op)
	if q.notify != "" {
		hr.Header.Set(NotifyHeader, q.notify)
	}
	resp, err := r.t.Client.Do(hr)
	if err != nil {
		return nil, err
	}
	if r.proto.Load() == nil {
		r.proto.Store(resp.Proto)
	}
	return resp, nil
}

// do sends one request and checks its status; it returns the body and status.
func (r *runner) do(ctx context.Context, q req) ([]byte, int, error) {
	resp, err := r.send(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, 0, err
	}
	want := q.want
	if want == nil {
		want = []int{http.StatusOK}
	}
	if r.t.Record != nil {
		r.t.Record.put(AnswerKey(q.op, continueOf(q.path)), Answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: data})
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, resp.StatusCode, fmt.Errorf("%s %s: got %d, want %v: %s", q.method, q.path, resp.StatusCode, want, trim(data))
	}
	return data, resp.StatusCode, nil
}

func continueOf(path string) string {
	_, query, ok := strings.Cut(path, "?")
	if !ok {
		return ""
	}
	v, _ := url.ParseQuery(query)
	return v.Get("continue")
}

func trim(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func (r *runner) createNamespace(ctx context.Context) error {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, r.ns)
	if _, _, err := r.do(ctx, req{op: "namespace-create", method: http.MethodPost, path: "/api/v1/namespaces",
		body: []byte(body), want: []int{http.StatusCreated}}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	return nil
}

// deleteNamespace runs on its own short deadline so cleanup happens even
// when the load's context has ended; it also deletes a CRD a failed run left.
func (r *runner) deleteNamespace() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r.crdLeft {
		_, _, _ = r.do(ctx, req{op: "crd-delete", method: http.MethodDelete, path: r.crdPath(), want: []int{http.StatusOK, http.StatusAccepted}})
	}
	_, _, _ = r.do(ctx, req{op: "namespace-delete", method: http.MethodDelete, path: "/api/v1/namespaces/" + r.ns,
		want: []int{http.StatusOK, http.StatusAccepted}})
}

// parallel runs op for i in part on plan.Concurrency workers and returns
// each op's latency.
func (r *runner) parallel(ctx context.Context, part span, op func(ctx context.Context, i int) error) ([]time.Duration, time.Duration, error) {
	n := part.hi - part.lo
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < r.plan.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := op(ctx, part.lo+i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), firstErr
}

func summarize(name string, lat []time.Duration, elapsed time.Duration) Phase {
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	p := Phase{Name: name, Ops: len(lat), Elapsed: elapsed}
	if len(sorted) > 0 {
		p.P50 = sorted[len(sorted)/2]
		p.P99 = sorted[(len(sorted)*99)/100]
	}
	if elapsed > 0 {
		p.OpsPerSec = float64(len(lat)) / elapsed.Seconds()
	}
	return p
}
