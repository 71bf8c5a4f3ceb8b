package refserver

import (
	"reflect"
	"slices"
	"testing"
)

// TestEventsV1AsKubeAPIServer holds what kube-apiserver v1.36.3 answered for
// events.k8s.io/v1 (observed with curl, both APIs side by side): the new
// API's validation in core's field names and kind, one store read through
// both APIs under each one's field names, managedFields entries of the
// other API dropped by a write, the API's own field labels, and core's table.
func TestEventsV1AsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	c.ns("ev")
	const (
		events = "/apis/events.k8s.io/v1/namespaces/default/events"
		core   = "/api/v1/namespaces/default/events"
	)
	newForm := func(name string, extra map[string]any) map[string]any {
		e := map[string]any{"metadata": map[string]any{"name": name}, "eventTime": "2026-11-29T23:00:00.000000Z", "type": "Normal",
			"reason": "R", "action": "A", "reportingController": "ctl", "reportingInstance": "i", "note": "n",
			"regarding": map[string]any{"kind": "ConfigMap", "namespace": "default", "name": "x"}}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   map[string]any
		code   int
		msg    string
	}{
		{"nothing of the new form", "POST", "/apis/events.k8s.io/v1/namespaces/ev/events", map[string]any{"metadata": map[string]any{"name": "bad1"}}, 422,
			`Event "bad1" is invalid: [involvedObject.namespace: Invalid value: "": does not match event.namespace, eventTime: Required value, type: Invalid value: "": has invalid value: ]`},
		{"deprecated fields and a short series", "POST", events, newForm("bad2", map[string]any{"type": "Odd",
			"deprecatedFirstTimestamp": "2026-11-29T23:00:00Z", "deprecatedCount": 3, "series": map[string]any{"count": 1}}), 422,
			`Event "bad2" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, type: Invalid value: "": has invalid value: Odd, firstTimestamp: Invalid value: "": needs to be unset, count: Invalid value: "": needs to be unset]`},
		{"a deprecated source and last time", "POST", events, newForm("bad3", map[string]any{"deprecatedSource": map[string]any{"host": "h"},
			"deprecatedLastTimestamp": "2026-11-29T23:00:00Z"}), 422,
			`Event "bad3" is invalid: [lastTimestamp: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]`},
		{"a name that is no DNS subdomain", "POST", events, newForm("Bad_Name", nil), 422,
			`Event "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"an event", "POST", events + "?fieldManager=first", newForm("good", map[string]any{"related": map[string]any{"kind": "Pod", "name": "p"}}), 201, ""},
		{"an update of more than the series", "PUT", events + "/good", newForm("good", map[string]any{"type": "Warning", "reason": "R2", "note": "n2",
			"regarding": map[string]any{"kind": "ConfigMap", "namespace": "default", "name": "y"},
			"series":    map[string]any{"count": 2, "lastObservedTime": "2026-11-29T23:01:00.000000Z"}}), 422,
			`Event "good" is invalid: [involvedObject: Invalid value: {"Kind":"ConfigMap","Namespace":"default","Name":"y","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable, ` +
				`reason: Invalid value: "R2": field is immutable, message: Invalid value: "n2": field is immutable, ` +
				`type: Invalid value: "Warning": field is immutable, related: Invalid value: null: field is immutable]`},
		{"deprecated fields set later", "PATCH", events + "/good", map[string]any{"eventTime": "2026-11-29T23:30:00.000000Z",
			"deprecatedSource": map[string]any{"host": "h"}, "deprecatedCount": 5, "deprecatedFirstTimestamp": "2026-11-29T23:00:00Z"}, 422,
			`Event "good" is invalid: [source: Invalid value: {"Component":"","Host":"h"}: field is immutable, firstTimestamp: Invalid value: "2026-11-29T23:00:00Z": field is immutable, ` +
				`count: Invalid value: 5: field is immutable, eventTime: Invalid value: "2026-11-29T23:30:00.000000Z": field is immutable]`},
		{"a series", "PATCH", events + "/good?fieldManager=series", map[string]any{"series": map[string]any{"count": 3, "lastObservedTime": "2026-11-29T23:02:00.000000Z"}}, 200, ""},
		{"a series too short", "PATCH", events + "/good", map[string]any{"series": map[string]any{"count": 0}}, 422,
			`Event "good" is invalid: series.count: Invalid value: "": should be at least 2`},
		{"a PUT of a missing event", "PUT", events + "/put", newForm("put", nil), 201, ""},
		{"a legacy event through core", "POST", core, map[string]any{"metadata": map[string]any{"name": "legacy"}, "reason": "Old", "message": "m",
			"involvedObject": map[string]any{"kind": "ConfigMap", "namespace": "default", "name": "x"}, "type": "Normal",
			"source": map[string]any{"component": "comp", "host": "h"}, "count": 4,
			"firstTimestamp": "2026-11-29T22:00:00Z", "lastTimestamp": "2026-11-29T22:30:00Z"}, 201, ""},
		{"its note changed through events.k8s.io", "PATCH", events + "/legacy", map[string]any{"note": "m2"}, 422,
			`Event "legacy" is invalid: message: Invalid value: "m2": field is immutable`},
	} {
		hdr := []string{}
		if tc.method == "PATCH" {
			hdr = []string{"Content-Type", "application/merge-patch+json"}
		}
		r := c.do(tc.method, tc.path, tc.body, hdr...)
		if r.Code != tc.code || (tc.msg != "" && r.str("message") != tc.msg) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Code, r.str("message"), tc.code, tc.msg)
		}
		if tc.code == 422 && (r.str("details.kind") != "Event" || r.get("details.group") != nil) {
			t.Errorf("%s: details %v, want core's Event", tc.name, r.get("details"))
		}
		// kube-apiserver checks the reason twice: its cause twice, its
		// message once (the aggregate drops repeats).
		if tc.name == "an update of more than the series" {
			if causes, _ := r.get("details.causes").([]any); len(causes) != 6 {
				t.Errorf("%s: causes %v, want 6 (the reason's twice)", tc.name, causes)
			}
		}
	}

	// One store, two APIs, each with its own field names.
	r := c.do("GET", core+"/good", nil)
	c.mustCode(r, 200)
	for path, want := range map[string]any{"apiVersion": "v1", "message": "n", "involvedObject.name": "x", "reportingComponent": "ctl",
		"series.count": float64(3), "related.kind": "Pod", "source": map[string]any{}, "firstTimestamp": nil} {
		if got := r.get(path); !reflect.DeepEqual(got, want) {
			t.Errorf("good through core: %s = %#v, want %#v", path, got, want)
		}
	}
	if _, ok := r.JSON["note"]; ok {
		t.Errorf("good through core has the new API's fields: %s", r.Body)
	}
	r = c.do("GET", events+"/legacy", nil)
	c.mustCode(r, 200)
	for path, want := range map[string]any{"apiVersion": "events.k8s.io/v1", "note": "m", "regarding.name": "x", "deprecatedCount": float64(4),
		"deprecatedSource.component": "comp", "deprecatedFirstTimestamp": "2026-11-29T22:00:00Z", "eventTime": nil} {
		if got := r.get(path); !reflect.DeepEqual(got, want) {
			t.Errorf("legacy through events.k8s.io: %s = %#v, want %#v", path, got, want)
		}
	}
	if _, ok := r.JSON["reportingController"]; ok {
		t.Errorf("legacy through events.k8s.io has an empty reportingController (omitted on kube-apiserver): %s", r.Body)
	}

	// A write through one API drops the other API's managedFields entries.
	r = c.do("PATCH", core+"/good?fieldManager=core-writer", map[string]any{"message": "changed"}, "Content-Type", "application/merge-patch+json")
	c.mustCode(r, 200)
	if got := managers(r); len(got) != 1 || got[0] != "core-writer v1" {
		t.Errorf("after core's write the managers are %v, want only core-writer's", got)
	}
	r = c.do("PATCH", events+"/good?fieldManager=events-writer", map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}},
		"Content-Type", "application/merge-patch+json")
	c.mustCode(r, 200)
	if got := managers(r); len(got) != 1 || got[0] != "events-writer events.k8s.io/v1" {
		t.Errorf("after events.k8s.io's write the managers are %v, want only events-writer's", got)
	}

	// The API's own field labels.
	for _, tc := range []struct {
		selector string
		code     int
		names    []string
	}{
		{"regarding.name=x,reportingController=ctl", 200, []string{"good", "put"}},
		{"type=Normal,reason=Old", 200, []string{"legacy"}},
		{"involvedObject.name=x", 400, nil},
		{"reportingComponent=ctl", 400, nil},
	} {
		r := c.do("GET", events+"?fieldSelector="+tc.selector, nil)
		if r.Code != tc.code {
			t.Errorf("%s: %d %s", tc.selector, r.Code, r.Body)
			continue
		}
		if tc.code == 400 {
			if want := "field label not supported: " + tc.selector[:len(tc.selector)-len("=x")]; tc.selector == "involvedObject.name=x" && r.str("message") != want {
				t.Errorf("%s: %q, want %q", tc.selector, r.str("message"), want)
			}
			continue
		}
		if got := itemNames(r); !slices.Equal(got, tc.names) {
			t.Errorf("%s: %v, want %v", tc.selector, got, tc.names)
		}
	}

	// Core's table, a row per event, its cells in core's terms.
	r = c.do("GET", events+"?fieldSelector=metadata.name%3Dlegacy", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	c.mustCode(r, 200)
	if cols := r.get("columnDefinitions").([]any); len(cols) != 10 || r.str("columnDefinitions.9.name") != "Name" {
		t.Errorf("columns: %v", cols)
	}
	if got := r.get("rows.0.cells"); !reflect.DeepEqual(got, []any{r.get("rows.0.cells.0"), "Normal", "Old", "configmap/x", "", "comp, h", "m", r.get("rows.0.cells.7"), float64(4), "legacy"}) {
		t.Errorf("row: %v", got)
	}

	// A watch through either API sees the other's writes in its own terms.
	next, stop := c.watch(events + "?watch=1&fieldSelector=regarding.name%3Dw")
	defer stop()
	c.mustCode(c.do("POST", core, map[string]any{"metadata": map[string]any{"name": "watched"}, "reason": "W", "message": "seen",
		"involvedObject": map[string]any{"kind": "ConfigMap", "namespace": "default", "name": "w"}}), 201)
	ev := next()
	if o, _ := ev["object"].(map[string]any); ev["type"] != "ADDED" || o["apiVersion"] != "events.k8s.io/v1" || o["note"] != "seen" {
		t.Errorf("watch through events.k8s.io: %v", ev)
	}
	c.mustCode(c.do("DELETE", events+"/watched", nil), 200)
	if ev := next(); ev["type"] != "DELETED" || evName(ev) != "watched" {
		t.Errorf("watch through events.k8s.io: %v", ev)
	}
}

// managers lists an answer's managedFields entries as "manager apiVersion".
func managers(r *resp) []string {
	var out []string
	entries, _ := r.get("metadata.managedFields").([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		out = append(out, m["manager"].(string)+" "+m["apiVersion"].(string))
	}
	return out
}

func itemNames(r *resp) []string {
	var out []string
	items, _ := r.get("items").([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)["metadata"].(map[string]any)
		out = append(out, m["name"].(string))
	}
	return out
}
