package refserver

import (
	"strings"
	"testing"
)

// TestStatusSubresourceOwnership: writes through /status record entries
// naming the subresource, and neither apply nor own what the status
// strategy resets; an apply through the main resource ignores status; a
// /scale write owns the object's replicas field. The
// expectations are kube-apiserver v1.36.3's answers to the same requests
// (curl, 2026-11-29).
func TestStatusSubresourceOwnership(t *testing.T) {
	_, c := startTest(t)
	c.ns("so")
	c.mustCode(c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD("Namespaced")), 201)
	w := "/apis/example.com/v1/namespaces/so/widgets/w"
	c.mustCode(c.do("POST", "/apis/example.com/v1/namespaces/so/widgets?fieldManager=creator",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red"}}`), 201)
	const apply, merge = "application/apply-patch+yaml", "application/merge-patch+json"
	for _, tc := range []struct {
		name, path, ct, manager, body string
		code                          int
		subresource                   string   // of the manager's entry
		owns, ownsNot                 []string // paths in its fieldsV1
		object                        map[string]any
		readBack                      string // read the object here (a /scale write answers a Scale)
	}{
		{name: "apply through a custom resource's /status resets spec and metadata",
			path: w + "/status", ct: apply, manager: "ada", code: 200, subresource: "status",
			body:    `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"by":"ada"}},"spec":{"color":"blue"},"status":{"replicas":3}}`,
			owns:    []string{"f:status.f:replicas"},
			ownsNot: []string{"f:spec", "f:metadata"},
			object:  map[string]any{"status.replicas": float64(3), "spec.color": "red", "metadata.labels": nil}},
		{name: "apply through the main resource ignores status and conflicts with no one",
			path: w, ct: apply, manager: "ben", code: 200,
			body:    `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"free":{"k":1}},"status":{"replicas":9}}`,
			owns:    []string{"f:spec.f:free"},
			ownsNot: []string{"f:status"},
			object:  map[string]any{"status.replicas": float64(3), "spec.free.k": float64(1)}},
		{name: "a conflict names the /status owner's subresource",
			path: w + "/status", ct: apply, manager: "cy", code: 409,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"replicas":4}}`},
		{name: "a namespace's /status patch keeps and records its metadata, resets spec",
			path: "/api/v1/namespaces/so/status", ct: merge, manager: "nsp", code: 200, subresource: "status",
			body:    `{"metadata":{"labels":{"l":"1"}},"spec":{"finalizers":["kubernetes","x.io/y"]},"status":{"phase":"Active"}}`,
			owns:    []string{"f:metadata.f:labels.f:l"},
			ownsNot: []string{"f:spec"},
			object:  map[string]any{"metadata.labels.l": "1", "spec.finalizers.1": nil}},
		{name: "a /scale write owns the object's replicas field",
			path: w + "/scale", ct: merge, manager: "dee", code: 200, subresource: "scale", readBack: w,
			body:   `{"spec":{"replicas":4}}`,
			owns:   []string{"f:spec.f:replicas"},
			object: map[string]any{"spec.replicas": float64(4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("PATCH", tc.path+"?fieldManager="+tc.manager, tc.body, "Content-Type", tc.ct)
			c.mustCode(r, tc.code)
			if tc.code == 409 {
				if msg := r.str("message"); !strings.Contains(msg, `conflict with "ada" with subresource "status"`) {
					t.Fatalf("conflict message: %s", msg)
				}
				return
			}
			if tc.readBack != "" {
				r = c.do("GET", tc.readBack, nil)
			}
			var entry map[string]any
			for _, e := range r.get("metadata.managedFields").([]any) {
				if e.(map[string]any)["manager"] == tc.manager {
					entry = e.(map[string]any)
				}
			}
			if entry == nil {
				t.Fatalf("no entry of %s: %s", tc.manager, r.Body)
			}
			if got, _ := entry["subresource"].(string); got != tc.subresource {
				t.Errorf("entry's subresource %q, want %q: %v", got, tc.subresource, entry)
			}
			fieldsV1, _ := entry["fieldsV1"].(map[string]any)
			fields := &resp{JSON: fieldsV1}
			for _, p := range tc.owns {
				if fields.get(p) == nil {
					t.Errorf("entry does not own %s: %v", p, entry)
				}
			}
			for _, p := range tc.ownsNot {
				if fields.get(p) != nil {
					t.Errorf("entry owns %s: %v", p, entry)
				}
			}
			for p, want := range tc.object {
				if got := r.get(p); got != want {
					t.Errorf("%s = %v, want %v: %s", p, got, want, r.Body)
				}
			}
		})
	}
}
