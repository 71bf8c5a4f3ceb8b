package refserver

import (
	"testing"
)

func widgetCRD(scope string) map[string]any {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer", "default": 1},
				"color":    map[string]any{"type": "string"},
				"free":     map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			}},
			"status": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer"},
			}},
		},
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": scope,
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": []string{"wd"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": schema},
				"subresources": map[string]any{"status": map[string]any{}, "scale": map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
			}},
		},
	}
}

func TestCustomResources(t *testing.T) {
	_, c := startTest(t)
	c.ns("cr")
	crd := c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD("Namespaced"))
	c.mustCode(crd, 201)
	conds := crd.get("status.conditions").([]any)
	if len(conds) != 2 || crd.str("status.acceptedNames.kind") != "Widget" {
		t.Fatalf("crd status: %s", crd.Body)
	}
	disc := c.do("GET", "/apis/example.com/v1", nil)
	c.mustCode(disc, 200)
	if disc.str("resources.0.name") != "widgets" || disc.str("resources.1.name") != "widgets/status" || disc.str("resources.2.name") != "widgets/scale" {
		t.Fatalf("discovery: %s", disc.Body)
	}
	base := "/apis/example.com/v1/namespaces/cr/widgets"
	// Defaulting and pruning (with a preserved subtree), warnings for dropped fields.
	r := c.do("POST", base, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","junk":1,"free":{"any":1}},"status":{"replicas":9}}`)
	c.mustCode(r, 201)
	if r.get("spec.replicas") != float64(1) || r.get("spec.junk") != nil || r.get("spec.free.any") != float64(1) || r.get("metadata.generation") != float64(1) {
		t.Fatalf("create: %s", r.Body)
	}
	if r.get("status") != nil {
		t.Fatalf("status is ignored on create with the status subresource: %s", r.Body)
	}
	if len(r.Header.Values("Warning")) != 1 {
		t.Fatalf("warnings: %v", r.Header.Values("Warning"))
	}
	// Validation.
	bad := c.do("POST", base, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"replicas":"x"}}`)
	c.mustCode(bad, 422)
	if bad.str("details.causes.0.field") != "spec.replicas" || bad.str("details.causes.0.reason") != "FieldValueTypeInvalid" {
		t.Fatalf("validation: %s", bad.Body)
	}
	// Status subresource: main resource ignores status, /status writes only status.
	m := c.do("PATCH", base+"/w", `{"spec":{"color":"blue"},"status":{"replicas":3}}`, "Content-Type", "application/merge-patch+json")
	c.mustCode(m, 200)
	if m.get("status") != nil || m.get("metadata.generation") != float64(2) {
		t.Fatalf("main patch: %s", m.Body)
	}
	s := c.do("PATCH", base+"/w/status", `{"spec":{"color":"green"},"status":{"replicas":3}}`, "Content-Type", "application/merge-patch+json")
	c.mustCode(s, 200)
	if s.get("status.replicas") != float64(3) || s.str("spec.color") != "blue" || s.get("metadata.generation") != float64(2) {
		t.Fatalf("status patch: %s", s.Body)
	}
	// Scale.
	sc := c.do("GET", base+"/w/scale", nil)
	if sc.str("kind") != "Scale" || sc.str("apiVersion") != "autoscaling/v1" || sc.get("spec.replicas") != float64(1) || sc.get("status.replicas") != float64(3) {
		t.Fatalf("scale: %s", sc.Body)
	}
	up := c.do("PATCH", base+"/w/scale", `{"spec":{"replicas":5}}`, "Content-Type", "application/merge-patch+json")
	c.mustCode(up, 200)
	if c.do("GET", base+"/w", nil).get("spec.replicas") != float64(5) {
		t.Fatal("scale did not write spec.replicas")
	}
	c.mustCode(c.do("PATCH", base+"/w", `{}`, "Content-Type", "application/strategic-merge-patch+json"), 415)
	// Deleting the CRD stops serving it and drops its objects.
	c.mustCode(c.do("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", nil), 200)
	c.mustCode(c.do("GET", base, nil), 404)
	c.mustCode(c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD("Cluster")), 201)
	l := c.do("GET", "/apis/example.com/v1/widgets", nil)
	c.mustCode(l, 200)
	if len(l.get("items").([]any)) != 0 {
		t.Fatalf("objects survived the CRD: %s", l.Body)
	}
}

func TestCRDValidation(t *testing.T) {
	_, c := startTest(t)
	bad := widgetCRD("Namespaced")
	bad["metadata"].(map[string]any)["name"] = "wrong.example.com"
	c.mustCode(c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad), 422)
	noScope := widgetCRD("Sideways")
	c.mustCode(c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", noScope), 422)
}

func TestDataDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s1, c1 := startTest(t, func(c *Config) { c.DataDir = dir })
	c1.ns("keep")
	cr := c1.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD("Cluster"))
	c1.mustCode(cr, 201)
	w := c1.do("POST", "/apis/example.com/v1/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`)
	c1.mustCode(w, 201)
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	_, c2 := startTest(t, func(c *Config) { c.DataDir = dir })
	got := c2.do("GET", "/apis/example.com/v1/widgets/w", nil)
	c2.mustCode(got, 200)
	if got.str("metadata.resourceVersion") != w.str("metadata.resourceVersion") || got.str("metadata.uid") != w.str("metadata.uid") {
		t.Fatalf("after restart: %s", got.Body)
	}
	c2.mustCode(c2.do("GET", "/api/v1/namespaces/keep", nil), 200)
}
