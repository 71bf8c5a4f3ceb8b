package refserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// TestEventRecorder drives the server with client-go's event recorder, as
// controllers use it: the first event is created, a repeat of it is
// aggregated into a strategic merge patch of its count, and a reader lists
// an object's events by the involved object's field selectors.
func TestEventRecorder(t *testing.T) {
	s, _ := startTest(t)
	ctx := ctxT(t)
	cs, err := kubernetes.NewForConfig(restConfig(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var cms []*corev1.ConfigMap
	for _, name := range []string{"watched", "other"} {
		cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cms = append(cms, cm)
	}

	b := record.NewBroadcaster()
	defer b.Shutdown()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	rec := b.NewRecorder(runtime.NewScheme(), corev1.EventSource{Component: "tester"})
	ref := func(cm *corev1.ConfigMap) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID}
	}
	rec.Event(ref(cms[0]), corev1.EventTypeWarning, "Broken", "it broke")
	rec.Event(ref(cms[1]), corev1.EventTypeNormal, "Fine", "all good")

	selector := fields.Set{"involvedObject.name": "watched", "involvedObject.namespace": "default",
		"involvedObject.kind": "ConfigMap", "involvedObject.uid": string(cms[0].UID)}.String()
	list := func() []corev1.Event {
		t.Helper()
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	waitFor := func(what string, ok func([]corev1.Event) bool) []corev1.Event {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := list()
			if ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the events of %s are %+v", what, selector, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	got := waitFor("the first event", func(e []corev1.Event) bool { return len(e) == 1 })
	if e := got[0]; e.Reason != "Broken" || e.Type != corev1.EventTypeWarning || e.Source.Component != "tester" || e.Count != 1 {
		t.Fatalf("event: %+v", e)
	}
	rec.Event(ref(cms[0]), corev1.EventTypeWarning, "Broken", "it broke")
	got = waitFor("the repeat's count", func(e []corev1.Event) bool { return len(e) == 1 && e[0].Count == 2 })
	if got[0].Reason != "Broken" {
		t.Fatalf("event after the repeat: %+v", got[0])
	}
	all, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("all events: %v %+v", err, all)
	}
}

// TestEventsAsKubeAPIServer holds what kube-apiserver v1.36.3 answered for
// events (observed with curl): validation of both forms, a PUT that
// creates, field labels of the kind's own, and the table kubectl prints.
func TestEventsAsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	const path = "/api/v1/namespaces/default/events"
	legacy := func(name, involvedNS string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "reason": "Seen", "message": "  saw it  ", "type": "Normal",
			"involvedObject": map[string]any{"kind": "ConfigMap", "name": "demo", "namespace": involvedNS, "fieldPath": "data"},
			"source":         map[string]any{"component": "tester", "host": "h1"}, "count": 3,
			"firstTimestamp": time.Now().Add(-90 * time.Minute).UTC().Format(time.RFC3339),
			"lastTimestamp":  time.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)}
	}
	for _, tc := range []struct {
		name, ns string // ns: the namespace posted to, "" for default
		body     map[string]any
		code     int
		msg      string
	}{
		{"an involved object in another namespace", "", legacy("x1", "other"), 422,
			`Event "x1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`},
		{"the new form without its fields", "", map[string]any{"metadata": map[string]any{"name": "x2"}, "eventTime": "2026-11-29T21:00:00.000000Z",
			"involvedObject": map[string]any{"kind": "ConfigMap", "name": "demo", "namespace": "default"}}, 422,
			`Event "x2" is invalid: [reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, ` +
				`reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end ` +
				`with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is ` +
				`'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, action: Required value, reason: Required value]`},
		{"the new form with a long reason", "kube-public", map[string]any{"metadata": map[string]any{"name": "x3"}, "eventTime": "2026-11-29T21:00:00.000000Z",
			"reportingComponent": "tester", "reportingInstance": "i", "action": "A", "reason": strings.Repeat("r", 130),
			"involvedObject": map[string]any{"kind": "ConfigMap", "name": "demo"}}, 422,
			`Event "x3" is invalid: [involvedObject.namespace: Invalid value: "": does not match event.namespace, reason: Invalid value: "": can have at most 128 characters]`},
		{"a name that is no DNS subdomain", "", legacy("Demo_X", "default"), 201, ""},
		{"a name with a slash", "", legacy("bad/name", "default"), 422,
			`Event "bad/name" is invalid: metadata.name: Invalid value: "bad/name": may not contain '/'`},
		{"an event", "", legacy("demo.1", "default"), 201, ""},
	} {
		p := path
		if tc.ns != "" {
			p = "/api/v1/namespaces/" + tc.ns + "/events"
		}
		r := c.do("POST", p, tc.body)
		if r.Code != tc.code || (tc.msg != "" && r.str("message") != tc.msg) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Code, r.str("message"), tc.code, tc.msg)
		}
	}

	// A PUT creates a missing event, whatever resourceVersion it brings;
	// what the event does not say reads as kube-apiserver's typed encoding
	// writes it.
	put := map[string]any{"metadata": map[string]any{"name": "put", "resourceVersion": "5"}, "reason": "Seen",
		"involvedObject": map[string]any{"kind": "ConfigMap", "name": "demo", "namespace": "default"}}
	r := c.do("PUT", path+"/put", put)
	if r.Code != http.StatusCreated {
		t.Fatalf("PUT of a missing event: %d %s", r.Code, r.Body)
	}
	for _, want := range []string{`"eventTime":null`, `"firstTimestamp":null`, `"lastTimestamp":null`, `"source":{}`, `"reportingComponent":""`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("the created event lacks %s: %s", want, r.Body)
		}
	}
	if r := c.do("PUT", "/api/v1/namespaces/default/configmaps/put", map[string]any{"metadata": map[string]any{"name": "put"}}); r.Code != http.StatusNotFound {
		t.Fatalf("PUT of a missing configmap: %d %s", r.Code, r.Body)
	}

	for sel, want := range map[string]string{
		"involvedObject.fieldPath=data,source=tester,type=Normal,reason=Seen,reportingComponent=": "Demo_X demo.1",
		"involvedObject.name=other": "",
	} {
		r := c.do("GET", path+"?fieldSelector="+sel, nil)
		var names []string
		for _, it := range r.get("items").([]any) {
			names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, " "); r.Code != 200 || got != want {
			t.Errorf("fieldSelector %s: %d %q, want %q", sel, r.Code, got, want)
		}
	}
	if r := c.do("GET", path+"?fieldSelector=bogus=1", nil); r.Code != 400 || r.str("message") != "field label not supported: bogus" {
		t.Errorf("unknown field label: %d %s", r.Code, r.Body)
	}

	r = c.do("GET", path+"/demo.1", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var cols []string
	for _, cd := range r.get("columnDefinitions").([]any) {
		m := cd.(map[string]any)
		cols = append(cols, fmt.Sprintf("%s/%v", m["name"], m["priority"]))
	}
	if got := strings.Join(cols, " "); got != "Last Seen/0 Type/0 Reason/0 Object/0 Subobject/1 Source/1 Message/0 First Seen/1 Count/1 Name/1" {
		t.Errorf("columns: %s", got)
	}
	cells := fmt.Sprint(r.get("rows").([]any)[0].(map[string]any)["cells"])
	if want := "[30m Normal Seen configmap/demo data tester, h1 saw it 90m 3 demo.1]"; cells != want {
		t.Errorf("cells: %s, want %s", cells, want)
	}
}

// TestEventTTL: events go their TTL after their last write, as on
// kube-apiserver (--event-ttl, an etcd lease renewed by every write): a
// watcher sees DELETED, an event written again lives on from that write,
// other kinds stay, and after a restart the events found get a full TTL.
func TestEventTTL(t *testing.T) {
	const ttl = time.Second
	dir := t.TempDir()
	s, c := startTest(t, func(cfg *Config) { cfg.EventTTL, cfg.DataDir = ttl, dir })
	const core = "/api/v1/namespaces/default/events"
	event := func(name, msg string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "reason": "R", "message": msg,
			"involvedObject": map[string]any{"kind": "ConfigMap", "namespace": "default", "name": "x"}}
	}
	c.mustCode(c.do("POST", "/api/v1/namespaces/default/configmaps", cm("stays", nil, nil)), 201)
	next, stop := c.watch(core + "?watch=1")
	defer stop()
	start := time.Now()
	c.mustCode(c.do("POST", core, event("short", "once")), 201)
	c.mustCode(c.do("POST", core, event("renewed", "first")), 201)
	for _, want := range []string{"short", "renewed"} {
		if ev := next(); ev["type"] != "ADDED" || evName(ev) != want {
			t.Fatalf("watch: %v, want %s ADDED", ev, want)
		}
	}
	time.Sleep(ttl / 2)
	// Written again through events.k8s.io/v1: the same store, renewed.
	renewed := time.Now() // before the write: its expiry is no earlier than a TTL from here
	r := c.do("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/renewed", map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}},
		"Content-Type", "application/merge-patch+json")
	c.mustCode(r, 200)
	if ev := next(); ev["type"] != "MODIFIED" || evName(ev) != "renewed" {
		t.Fatalf("watch: %v, want renewed MODIFIED", ev)
	}
	ev := next()
	if ev["type"] != "DELETED" || evName(ev) != "short" || time.Since(start) < ttl {
		t.Fatalf("watch after %s: %v, want short DELETED after %s", time.Since(start), ev, ttl)
	}
	if got := c.do("GET", core+"/renewed", nil); got.Code != 200 {
		t.Fatalf("the renewed event is gone after %s: %d", time.Since(renewed), got.Code)
	}
	ev = next()
	if ev["type"] != "DELETED" || evName(ev) != "renewed" || time.Since(renewed) < ttl {
		t.Fatalf("watch %s after the renewal: %v, want renewed DELETED after %s", time.Since(renewed), ev, ttl)
	}
	c.mustCode(c.do("GET", "/api/v1/namespaces/default/configmaps/stays", nil), 200)

	// After a restart the events found go a full TTL later.
	c.mustCode(c.do("POST", core, event("kept", "across")), 201)
	stop()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now() // before the start that gives the event its TTL
	_, c2 := startTest(t, func(cfg *Config) { cfg.EventTTL, cfg.DataDir = ttl, dir })
	c2.mustCode(c2.do("GET", core+"/kept", nil), 200)
	deadline := restarted.Add(10 * ttl)
	for c2.do("GET", core+"/kept", nil).Code == 200 {
		if time.Now().After(deadline) {
			t.Fatalf("the event kept across the restart is still there %s later", time.Since(restarted))
		}
		time.Sleep(ttl / 10)
	}
	if gone := time.Since(restarted); gone < ttl {
		t.Fatalf("the event kept across the restart went %s after it, before its TTL", gone)
	}
}
