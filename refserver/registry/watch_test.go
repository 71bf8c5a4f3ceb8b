package registry

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

func TestMetadataMayMatch(t *testing.T) {
	k := &Kind{Resource: "configmaps", Namespaced: true}
	value := []byte(`{"metadata":{"name":"a","namespace":"ns","labels":{"app":"web"}},"data":{"x":"1"}}`)
	tests := []struct {
		labels, fields string
		want           bool
	}{
		{"app=web", "", true},
		{"app=db", "", false},
		{"tier", "", false},
		{"", "metadata.name=a", true},
		{"", "metadata.name=b", false},
		{"", "metadata.namespace=other", false},
		{"app=web", "metadata.name!=a", false},
		{"", "spec.kindSpecific=x", true}, // needs the whole object: may match
		{"app=db", "spec.kindSpecific=x", false},
	}
	for _, tt := range tests {
		ls, err := labels.Parse(tt.labels)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := fields.ParseSelector(tt.fields)
		if err != nil {
			t.Fatal(err)
		}
		if got := metadataMayMatch(k, Selector{Labels: ls, Fields: fs}, value); got != tt.want {
			t.Errorf("labels %q fields %q: %v, want %v", tt.labels, tt.fields, got, tt.want)
		}
	}
	if !metadataMayMatch(k, Selector{Labels: labels.Everything()}, []byte("not json")) {
		t.Error("undecodable bytes must go to the full decode, which reports them")
	}
}

// TestWatchInitialState: the initial state honours the selector, the
// initialisation callback runs once when it is delivered, and a watch whose
// client leaves mid-way stops and releases its slot.
func TestWatchInitialState(t *testing.T) {
	st := storage.NewMemory(storage.Options{})
	r := New(Config{Store: st})
	r.Register(BuiltinKinds(r)...)
	defer func() { r.Close(); _ = st.Close() }()
	k := r.Lookup("", "configmaps")
	ctx := context.Background()
	for i := range 50 {
		app := []string{"web", "db"}[i%2]
		v := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%02d","namespace":"ns","labels":{"app":%q}}}`, i, app)
		if _, err := st.Create(ctx, keyOf(k, "ns", fmt.Sprintf("c%02d", i)), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	plan := rvplan.Plan{Mode: rvplan.Latest, InitialEvents: true}
	web, _ := labels.Parse("app=web")

	var done atomic.Int32
	wctx := WithInitDone(ctx, func() { done.Add(1) })
	w, err := r.Watch(wctx, k, "v1", "ns", plan, Selector{Labels: web})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		ev := <-w.Events()
		if ev.Type != Added || meta(ev.Object)["name"] != fmt.Sprintf("c%02d", 2*i) {
			t.Fatalf("initial event %d: %s %v", i, ev.Type, meta(ev.Object)["name"])
		}
	}
	w.RequestBookmark()
	if ev := <-w.Events(); ev.Type != Bookmark {
		t.Fatalf("after the initial state: %s, want the requested BOOKMARK", ev.Type)
	}
	if done.Load() != 1 {
		t.Fatalf("initialisation callback ran %d times once the state was delivered, want 1", done.Load())
	}
	w.Stop()

	cctx, cancel := context.WithCancel(WithInitDone(ctx, func() { done.Add(1) }))
	w, err = r.Watch(cctx, k, "v1", "ns", plan, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	<-w.Events()
	cancel() // the client leaves after one of 50 objects
	n := 0
	for range w.Events() {
		n++
	}
	if n > initBatch {
		t.Errorf("%d more events after the client left", n)
	}
	if done.Load() != 2 {
		t.Errorf("initialisation callback ran %d times in all, want 2", done.Load())
	}
	if len(initSlots) != 0 {
		t.Errorf("%d decoding slots still held", len(initSlots))
	}
}
