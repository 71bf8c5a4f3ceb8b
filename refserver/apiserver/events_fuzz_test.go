package apiserver

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// FuzzEventsTwoAPIs: whatever event body is written through either API
// (core/v1 or events.k8s.io/v1), the write gets an answer below 500, and an
// event it stores reads, lists and deletes through both APIs, the two
// forms saying the same (note and message, regarding and involvedObject,
// the series, the deprecated count and count): one store, no conversion
// that fails on what was accepted.
func FuzzEventsTwoAPIs(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"e"},"reason":"R","message":"m","involvedObject":{"kind":"ConfigMap","namespace":"default","name":"x"},"count":3,"source":{"component":"c"}}`,
		`{"metadata":{"name":"e"},"eventTime":"2026-11-29T23:00:00.000000Z","type":"Normal","reason":"R","action":"A","reportingController":"ctl","reportingInstance":"i","note":"n","regarding":{"kind":"ConfigMap","namespace":"default","name":"x"},"series":{"count":2,"lastObservedTime":"2026-11-29T23:01:00.000000Z"}}`,
		`{"metadata":{"name":"e"},"eventTime":"2026-11-29T23:00:00.000000Z","reportingComponent":"ctl","reportingInstance":"i","action":"A","reason":"R","involvedObject":{"namespace":"default"},"related":{"name":"p"}}`,
		`{"metadata":{"name":"e","labels":{"a":"b"}},"deprecatedCount":2147483647,"regarding":{"uid":"u"},"note":"\u00e9"}`,
		`{"metadata":{"name":"e"},"series":{"count":-1},"eventTime":null}`, `{"metadata":{"name":"e"},"regarding":5}`, `[]`, `{`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, viaEvents bool) {
		reg, _ := testKinds(t)
		h := New(Config{Registry: reg, Logf: t.Logf})
		const (
			core   = "/api/v1/namespaces/default/events"
			events = "/apis/events.k8s.io/v1/namespaces/default/events"
		)
		at := core
		if viaEvents {
			at = events
		}
		rec := benchDo(h, "POST", at, string(body), "application/json")
		if rec.Code >= 500 {
			t.Fatalf("POST %s: %d %s", at, rec.Code, rec.Body)
		}
		if rec.Code != 201 {
			return
		}
		var created struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.Metadata.Name == "" {
			t.Fatalf("created without a name: %v %s", err, rec.Body)
		}
		name := created.Metadata.Name
		var c corev1.Event
		var e eventsv1.Event
		for _, read := range []struct {
			path string
			into any
		}{{core + "/" + name, &c}, {events + "/" + name, &e}, {core, nil}, {events, nil}} {
			got := benchDo(h, "GET", read.path, "", "")
			if got.Code != 200 {
				t.Fatalf("GET %s: %d %s", read.path, got.Code, got.Body)
			}
			if read.into != nil {
				if err := json.Unmarshal(got.Body.Bytes(), read.into); err != nil {
					t.Fatalf("GET %s: %v %s", read.path, err, got.Body)
				}
			}
		}
		if c.Message != e.Note || !reflect.DeepEqual(c.InvolvedObject, e.Regarding) || c.Count != e.DeprecatedCount ||
			c.ReportingController != e.ReportingController || (c.Series == nil) != (e.Series == nil) ||
			(c.Series != nil && c.Series.Count != e.Series.Count) || c.ResourceVersion != e.ResourceVersion {
			t.Fatalf("the two APIs differ:\ncore   %+v\nevents %+v", c, e)
		}
		other := events
		if viaEvents {
			other = core
		}
		if del := benchDo(h, "DELETE", other+"/"+name, "", ""); del.Code != 200 {
			t.Fatalf("DELETE through the other API: %d %s", del.Code, del.Body)
		}
		if got := benchDo(h, "GET", at+"/"+name, "", ""); got.Code != 404 {
			t.Fatalf("GET after the delete: %d %s", got.Code, got.Body)
		}
	})
}
