package clients

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "clients"

// Bounds of every wait in this area: client machinery converging (a few
// round trips) and history expiring on a target without a compaction hook.
const (
	convergeBudget = 15 * time.Second
	pollEvery      = 100 * time.Millisecond
)

// quietCtx is ctx with a logger that drops client-go's own log lines (the
// reflector logs every expected 410 and every stopped watch).
func quietCtx(ctx context.Context) context.Context { return klog.NewContext(ctx, logr.Discard()) }

// runCtx is a context that ends with the spec, for informers and reflectors.
func runCtx(f *fw.Framework) context.Context {
	ctx, cancel := context.WithCancel(quietCtx(f.Ctx()))
	DeferCleanup(cancel)
	return ctx
}

func typedClient() *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(fw.RESTConfig())
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cs
}

func dynamicClient() *dynamic.DynamicClient {
	dc, err := dynamic.NewForConfig(fw.RESTConfig())
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return dc
}

// lwCall is one call a reflector made through a recordingLW.
type lwCall struct {
	Watch    bool
	Opts     metav1.ListOptions
	Err      error
	ResultRV string // a list's metadata.resourceVersion
}

func (c lwCall) String() string {
	verb := "list"
	if c.Watch {
		verb = "watch"
	}
	s := fmt.Sprintf("%s rv=%q match=%q limit=%d", verb, c.Opts.ResourceVersion, c.Opts.ResourceVersionMatch, c.Opts.Limit)
	if c.Opts.SendInitialEvents != nil {
		s += fmt.Sprintf(" sendInitialEvents=%v", *c.Opts.SendInitialEvents)
	}
	if c.ResultRV != "" {
		s += " -> rv " + c.ResultRV
	}
	if c.Err != nil {
		s += " err=" + c.Err.Error()
	}
	return s
}

// recordingLW is the ListerWatcher given to an informer or reflector: it
// forwards to the real client, records every call and every ERROR event, can
// end the current watch (as a dropped connection would) and can hold the next
// watch until released.
type recordingLW struct {
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
	// noWatchList makes the reflector use LIST + WATCH even when client-go's
	// WatchListClient gate is on (client-go's documented opt-out).
	noWatchList bool

	mu       sync.Mutex
	calls    []lwCall
	errors   []*metav1.Status // ERROR events seen on watches
	current  *cutWatch
	held     chan struct{} // non-nil: the next watch waits for it to close
	watching chan struct{} // closed when a held watch call arrives
}

var (
	_ cache.ListerWatcherWithContext = (*recordingLW)(nil)
	_ cache.ListerWatcher            = (*recordingLW)(nil)
)

func (l *recordingLW) IsWatchListSemanticsUnSupported() bool { return l.noWatchList }

func (l *recordingLW) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	obj, err := l.list(ctx, o)
	c := lwCall{Opts: o, Err: err}
	if err == nil {
		if lm, merr := meta.ListAccessor(obj); merr == nil {
			c.ResultRV = lm.GetResourceVersion()
		}
	}
	l.add(c)
	return obj, err
}

func (l *recordingLW) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	held, watching := l.held, l.watching
	l.mu.Unlock()
	if held != nil {
		close(watching)
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w, err := l.watch(ctx, o)
	l.add(lwCall{Watch: true, Opts: o, Err: err})
	if err != nil {
		if st, ok := err.(apierrors.APIStatus); ok {
			s := st.Status()
			l.addError(&s)
		}
		return nil, err
	}
	cw := &cutWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), onError: l.addError}
	go cw.pump()
	l.mu.Lock()
	l.current = cw
	l.mu.Unlock()
	return cw, nil
}

func (l *recordingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

func (l *recordingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l *recordingLW) add(c lwCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *recordingLW) addError(s *metav1.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, s)
}

// Calls returns the calls so far.
func (l *recordingLW) Calls() []lwCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// Errors returns the ERROR events' Status objects seen so far.
func (l *recordingLW) Errors() []*metav1.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errors)
}

// HoldAndCut makes the next watch wait for release, ends the current watch
// (the reflector then watches again from its last resourceVersion) and
// returns once that next watch call has arrived.
func (l *recordingLW) HoldAndCut() (release func()) {
	l.mu.Lock()
	held, watching := make(chan struct{}), make(chan struct{})
	l.held, l.watching = held, watching
	cur := l.current
	l.mu.Unlock()
	ExpectWithOffset(1, cur).NotTo(BeNil(), "the reflector has no watch open")
	cur.Stop()
	Eventually(watching).WithTimeout(convergeBudget).Should(BeClosed(), "the reflector did not watch again after its watch ended")
	return func() {
		l.mu.Lock()
		l.held = nil
		l.mu.Unlock()
		close(held)
	}
}

// cutWatch forwards a watch and can be ended from outside.
type cutWatch struct {
	inner   watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	onError func(*metav1.Status)
}

func (w *cutWatch) pump() {
	defer close(w.out)
	defer w.inner.Stop()
	in := w.inner.ResultChan()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-in:
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				if st, ok := ev.Object.(*metav1.Status); ok {
					w.onError(st)
				} else {
					w.onError(&metav1.Status{Message: fmt.Sprintf("ERROR event with %T", ev.Object)})
				}
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}
}

func (w *cutWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }
func (w *cutWatch) ResultChan() <-chan watch.Event { return w.out }

// state is name -> resourceVersion of a set of objects.
type state map[string]string

func (s state) String() string {
	keys := slices.Sorted(maps.Keys(s))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "@" + s[k]
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func stateOf(objs []any) state {
	out := state{}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		Expect(err).NotTo(HaveOccurred())
		out[m.GetName()] = m.GetResourceVersion()
	}
	return out
}

func listState(obj runtime.Object) state {
	items, err := meta.ExtractList(obj)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	objs := make([]any, len(items))
	for i := range items {
		objs[i] = items[i]
	}
	return stateOf(objs)
}

// expectConverges waits (bounded) until the store holds exactly what a fresh
// list from the server holds, and fails with both otherwise.
func expectConverges(store cache.Store, list func() (runtime.Object, error)) state {
	var want, got state
	ok := fw.PollUntil(convergeBudget, pollEvery, func() bool {
		obj, err := list()
		if err != nil {
			return false
		}
		want, got = listState(obj), stateOf(store.List())
		return maps.Equal(want, got)
	})
	ExpectWithOffset(1, ok).To(BeTrue(), "the cache did not converge within %s:\n cache: %s\nserver: %s", convergeBudget, got, want)
	return got
}

// sortedByUID returns the objects sorted by UID, as client-go's consistency
// detector compares them.
func sortedByUID(objs []runtime.Object) []runtime.Object {
	out := slices.Clone(objs)
	sort.Slice(out, func(i, j int) bool {
		a, _ := meta.Accessor(out[i])
		b, _ := meta.Accessor(out[j])
		return a.GetUID() < b.GetUID()
	})
	return out
}

// isGone tells whether a Status is a 410 client-go treats as expired history.
func isGone(s *metav1.Status) bool {
	err := &apierrors.StatusError{ErrStatus: *s}
	return s.Code == http.StatusGone && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}
