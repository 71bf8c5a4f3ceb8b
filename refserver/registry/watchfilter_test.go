package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/rvplan"
)

// TestWatchSelectorFilter holds the store-side filter of a selector watch
// to translate: over writes that move objects into and out of the
// selector, keep their labels, drop them or delete the objects, the filter
// keeps exactly the events translate sends, and a watch started with it
// delivers what translate makes of every event.
func TestWatchSelectorFilter(t *testing.T) {
	r, k := newTestRegistry(t)
	st := r.store // writes through the registry's store feed its label cache, as the server's do
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	value := func(name, labelsJSON string) []byte {
		md := fmt.Sprintf(`"name":%q,"namespace":"ns"`, name)
		if labelsJSON != "" {
			md += `,"labels":` + labelsJSON
		}
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + md + `}}`)
	}
	type write struct {
		name, labels string
		del          bool
	}
	writes := []write{
		{name: "a", labels: `{"app":"web"}`},            // created inside
		{name: "b", labels: `{"app":"db"}`},             // created outside
		{name: "c"},                                     // created without labels
		{name: "a", labels: `{"app":"web","tier":"1"}`}, // stays inside
		{name: "b", labels: `{"app":"db","tier":"1"}`},  // stays outside
		{name: "b", labels: `{"app":"web"}`},            // moves in
		{name: "a", labels: `{"app":"db"}`},             // moves out
		{name: "c", labels: `{"app":"api"}`},            // gains a label
		{name: "a", del: true},                          // deleted outside
		{name: "b", del: true},                          // deleted inside
		{name: "c", labels: `{}`},                       // loses its labels
		{name: "d", labels: `{"tier":"1"}`},             // created with another key
		{name: "d", labels: `{"tier":"1","app":"api"}`}, // gains the key
		{name: "c", del: true},                          // deleted without labels
	}

	prefix := prefixOf(k, "ns")
	for _, c := range []struct{ labels, fields string }{
		{labels: "app=web"},
		{labels: "app!=db"},
		{labels: "app in (web,api)"},
		{labels: "tier"},
		{labels: "!app"},
		{fields: "metadata.name=a-%d"},
		{fields: "metadata.name!=a-%d,metadata.namespace=ns"},
		{fields: "metadata.namespace!=ns"},
		{labels: "app=web", fields: "metadata.name=b-%d"},
	} {
		t.Run(c.labels+" "+c.fields, func(t *testing.T) {
			start := st.CurrentRevision()
			ls, err := labels.Parse(c.labels)
			if err != nil {
				t.Fatal(err)
			}
			expr := c.fields
			if strings.Contains(expr, "%d") {
				expr = fmt.Sprintf(expr, start)
			}
			fs, err := fields.ParseSelector(expr)
			if err != nil {
				t.Fatal(err)
			}
			sel := Selector{Labels: ls, Fields: fs}
			stored := storedSelectorOf(k, "v1", sel)
			keep := r.eventFilter(stored)
			if keep == nil {
				t.Fatal("no filter for a selector of labels, name and namespace at the storage version")
			}
			raw, err := st.Watch(ctx, prefix, start, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Stop()
			w, err := r.Watch(ctx, k, "v1", "ns", rvplan.Plan{Mode: rvplan.Exact, Revision: start}, sel)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for i, wr := range writes {
				name := fmt.Sprintf("%s-%d", wr.name, start)
				key := keyOf(k, "ns", name)
				if wr.del {
					_, _, err = st.Delete(ctx, key, 0)
				} else if _, err = st.Update(ctx, key, value(name, wr.labels), 0); err != nil {
					_, err = st.Create(ctx, key, value(name, wr.labels))
				}
				if err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			var want []string
			dropped := 0
			for range writes {
				ev, ok := raw.Next(nil)
				if !ok {
					t.Fatalf("raw watch ended: %v", raw.Err())
				}
				// Decoding the values is the reference; the stored
				// values must decide every event here, and alike.
				out, sent := r.translate(k, "v1", ev, sel, nil)
				if kept := keep(ev); kept != sent {
					t.Fatalf("revision %d (%s %s): filter keeps %v, translate sends %v", ev.Revision, ev.Type, ev.Key, kept, sent)
				}
				if _, _, decided := r.decideStored(stored, ev); !decided {
					t.Fatalf("revision %d (%s %s): the stored values did not decide", ev.Revision, ev.Type, ev.Key)
				}
				if fast, fastSent := r.translate(k, "v1", ev, sel, stored); fastSent != sent || sent && (fast.Type != out.Type || meta(fast.Object)["name"] != meta(out.Object)["name"]) {
					t.Fatalf("revision %d (%s %s): from the stored values %v %s, from the decoded ones %v %s", ev.Revision, ev.Type, ev.Key, fastSent, fast.Type, sent, out.Type)
				}
				if !sent {
					dropped++
					continue
				}
				want = append(want, fmt.Sprintf("%s %v %d", out.Type, meta(out.Object)["name"], out.Revision))
			}
			if dropped == 0 {
				t.Fatalf("no write was outside %v: the fixture cannot tell a filter that keeps everything", sel)
			}
			got := make(chan string, len(writes))
			go w.Run(func(ev WatchEvent) bool {
				got <- fmt.Sprintf("%s %v %d", ev.Type, meta(ev.Object)["name"], ev.Revision)
				return true
			}, nil)
			for i, wantEv := range want {
				select {
				case g := <-got:
					if g != wantEv {
						t.Fatalf("event %d: %s, want %s", i, g, wantEv)
					}
				case <-ctx.Done():
					t.Fatalf("event %d: none, want %s", i, wantEv)
				}
			}
		})
	}

	other, _ := fields.ParseSelector("data.x=a")
	web, _ := labels.Parse("app=web")
	for _, c := range []struct {
		name    string
		version string
		sel     Selector
	}{
		{"no selector", "v1", Selector{}},
		{"everything", "v1", Selector{Labels: labels.Everything(), Fields: fields.Everything()}},
		{"another field", "v1", Selector{Labels: web, Fields: other}},
		{"another version", "v2", Selector{Labels: web}},
	} {
		if storedSelectorOf(k, c.version, c.sel) != nil {
			t.Errorf("%s: a filter, want none (labels, name and namespace do not decide)", c.name)
		}
	}
}
