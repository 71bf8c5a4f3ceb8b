package apiserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiconform/apiconform/refserver/auth"
)

// wireServer serves the built-in kinds and one custom resource (widgets,
// example.com/v1, namespaced, with status and scale) over httptest.
func wireServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	reg, _ := testKinds(t)
	cfg.Registry, cfg.Logf = reg, t.Logf
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
	"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
	"schema":{"openAPIV3Schema":{"type":"object","description":"A widget.","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","default":1},"default":{"type":"string","description":"a field named default"}}},"status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`
	if code, _, b := call(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, "Content-Type", "application/json", "Authorization", "Bearer admin"); code != 201 {
		t.Fatalf("create CRD: %d %s", code, b)
	}
	for _, ns := range []string{"default", "demo"} {
		if code, _, b := call(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`, "Content-Type", "application/json", "Authorization", "Bearer admin"); code != 201 {
			t.Fatalf("create namespace: %d %s", code, b)
		}
	}
	return srv
}

// call makes one request; hdr are header name/value pairs.
func call(t *testing.T, srv *httptest.Server, method, path, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "wire-test")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

func TestPrettyJSON(t *testing.T) {
	srv := wireServer(t, Config{})
	for _, tt := range []struct {
		name, query, ua, accept string
		pretty                  bool
	}{
		{"client", "", "client-go/v1.36.3", "", false},
		{"curl", "", "curl/8.5.0", "", true},
		{"wget", "", "Wget/1.21", "", true},
		{"browser", "", "Mozilla/5.0 (X11)", "", true},
		{"curl-like", "", "mycurl/1", "", false},
		{"pretty=true", "?pretty=true", "client-go", "", true},
		{"pretty=1", "?pretty=1", "client-go", "", true},
		{"pretty=false beats curl", "?pretty=false", "curl/8", "", false},
		{"pretty=junk", "?pretty=junk", "curl/8", "", false},
		{"media type pretty=1", "", "client-go", "application/json;pretty=1", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, b := call(t, srv, "GET", "/api/v1/namespaces"+tt.query, "", "User-Agent", tt.ua, "Accept", tt.accept)
			if code != 200 {
				t.Fatalf("%d %s", code, b)
			}
			indented := bytes.HasPrefix(b, []byte("{\n  "))
			if indented != tt.pretty {
				t.Fatalf("indented=%v, want %v:\n%.80s", indented, tt.pretty, b)
			}
			if !tt.pretty && !bytes.HasSuffix(b, []byte("}\n")) {
				t.Fatalf("compact JSON ends without kube-apiserver's newline: %q", b[len(b)-3:])
			}
		})
	}
}

func TestProtobufObjects(t *testing.T) {
	srv := wireServer(t, Config{})
	// A ConfigMap body in protobuf, created, then read back in protobuf.
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"a": "b"}}
	var body bytes.Buffer
	if err := pbSerializer.Encode(cm, &body); err != nil {
		t.Fatal(err)
	}
	code, h, b := call(t, srv, "POST", "/api/v1/namespaces/default/configmaps", body.String(), "Content-Type", protobufType, "Accept", protobufType)
	if code != 201 || h.Get("Content-Type") != protobufType {
		t.Fatalf("create: %d %s %q", code, h.Get("Content-Type"), b)
	}
	got := decodePB(t, b).(*corev1.ConfigMap)
	if got.Name != "c1" || got.Data["a"] != "b" || got.ResourceVersion == "" {
		t.Fatalf("created: %+v", got)
	}
	_, _, b = call(t, srv, "GET", "/api/v1/namespaces/default/configmaps", "", "Accept", protobufType+", application/json")
	if list := decodePB(t, b).(*corev1.ConfigMapList); len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %+v", list)
	}
	code, _, b = call(t, srv, "GET", "/api/v1/namespaces/default/configmaps/nope", "", "Accept", protobufType)
	if st := decodePB(t, b).(*metav1.Status); code != 404 || st.Reason != metav1.StatusReasonNotFound {
		t.Fatalf("404: %d %+v", code, st)
	}
	// A CRD in protobuf: client-go's apiextensions clientset sends one.
	crd := &apiextensionsv1.CustomResourceDefinition{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}}}}}
	body.Reset()
	if err := pbSerializer.Encode(crd, &body); err != nil {
		t.Fatal(err)
	}
	code, _, b = call(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body.String(), "Content-Type", protobufType, "Accept", protobufType)
	if code != 201 {
		t.Fatalf("create CRD in protobuf: %d %q", code, b)
	}
	if got := decodePB(t, b).(*apiextensionsv1.CustomResourceDefinition); got.Spec.Names.Kind != "Gadget" || len(got.Status.Conditions) == 0 {
		t.Fatalf("created CRD: %+v", got)
	}
}

func TestProtobufCustomResources(t *testing.T) {
	srv := wireServer(t, Config{})
	cr := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"}}`
	for _, tt := range []struct {
		name, method, path, body, ct, accept string
		code                                 int
		reason                               metav1.StatusReason
	}{
		{"get, protobuf only", "GET", "/apis/example.com/v1/namespaces/default/widgets", "", "", protobufType, 406, metav1.StatusReasonNotAcceptable},
		{"create, protobuf only: refused before acting", "POST", "/apis/example.com/v1/namespaces/default/widgets", cr, "application/json", protobufType, 406, metav1.StatusReasonNotAcceptable},
		{"watch, protobuf only", "GET", "/apis/example.com/v1/namespaces/default/widgets?watch=1", "", "", protobufType + ";stream=watch", 406, metav1.StatusReasonNotAcceptable},
		{"protobuf body", "POST", "/apis/example.com/v1/namespaces/default/widgets", crEnvelope(t), protobufType, "", 415, metav1.StatusReasonUnsupportedMediaType},
		{"protobuf then json", "GET", "/apis/example.com/v1/namespaces/default/widgets", "", "", protobufType + ", application/json", 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, b := call(t, srv, tt.method, tt.path, tt.body, "Content-Type", tt.ct, "Accept", tt.accept)
			if code != tt.code {
				t.Fatalf("%d, want %d: %q", code, tt.code, b)
			}
			if tt.code == 406 {
				// kube-apiserver renders this Status in protobuf.
				st := decodePB(t, b).(*metav1.Status)
				if st.Reason != tt.reason || st.Message != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
					t.Fatalf("%+v", st)
				}
				return
			}
			if tt.reason != "" && !bytes.Contains(b, []byte(tt.reason)) || tt.code == 200 && h.Get("Content-Type") != "application/json" {
				t.Fatalf("%s %q", h.Get("Content-Type"), b)
			}
		})
	}
	// Nothing was created by the refused create.
	if _, _, b := call(t, srv, "GET", "/apis/example.com/v1/namespaces/default/widgets", ""); bytes.Contains(b, []byte(`"w1"`)) {
		t.Fatalf("the 406 create acted: %s", b)
	}
}

func TestProtobufWatch(t *testing.T) {
	srv := wireServer(t, Config{})
	if code, _, b := call(t, srv, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c1"}}`, "Content-Type", "application/json"); code != 201 {
		t.Fatalf("%d %s", code, b)
	}
	code, h, b := call(t, srv, "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1&allowWatchBookmarks=true", "", "Accept", protobufType+";stream=watch")
	if code != 200 || h.Get("Content-Type") != protobufType+";stream=watch" {
		t.Fatalf("%d %s", code, h.Get("Content-Type"))
	}
	var types []string
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("truncated frame %q", b)
		}
		n := binary.BigEndian.Uint32(b[:4])
		frame := b[4 : 4+n]
		b = b[4+n:]
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			t.Fatalf("frame is not a bare WatchEvent: %v", err)
		}
		types = append(types, ev.Type)
		obj := decodePB(t, ev.Object.Raw)
		if cm, ok := obj.(*corev1.ConfigMap); ev.Type == "ADDED" && (!ok || cm.Name != "c1") {
			t.Fatalf("ADDED object: %#v", obj)
		}
	}
	if len(types) == 0 || types[0] != "ADDED" {
		t.Fatalf("events %v", types)
	}
	if code, _, b := call(t, srv, "GET", "/api/v1/namespaces/default/configmaps?watch=1", "", "Accept", "application/yaml"); code != 406 || !bytes.Contains(b, []byte("stream=watch")) {
		t.Fatalf("YAML watch: %d %s", code, b)
	}
}

func decodePB(t *testing.T, b []byte) runtime.Object {
	t.Helper()
	obj, _, err := pbSerializer.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("not Kubernetes protobuf: %v (%q)", err, b)
	}
	return obj
}

func ptr[T any](v T) *T { return &v }

// crEnvelope is a Widget in the protobuf envelope, as a client without its
// Go type cannot send but a fuzzer can.
func crEnvelope(t *testing.T) string {
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, Raw: []byte{}}
	b, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return "k8s\x00" + string(b)
}

func TestDiscoveryNegotiation(t *testing.T) {
	srv := wireServer(t, Config{})
	const agg = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, tt := range []struct {
		path, accept string
		code         int
		ct, kind     string
	}{
		{"/apis", agg, 200, agg, "APIGroupDiscoveryList"},
		{"/api", agg, 200, agg, "APIGroupDiscoveryList"},
		{"/apis", agg + ",application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", 200, agg, "APIGroupDiscoveryList"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", 406, "application/json", "Status"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", 406, "application/json", "Status"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", 200, "application/json", "APIGroupList"},
		{"/apis", "", 200, "application/json", "APIGroupList"},
		{"/api", "application/json", 200, "application/json", "APIVersions"},
		{"/apis", "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", 200, "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
		{"/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", 200, "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
	} {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			code, h, b := call(t, srv, "GET", tt.path, "", "Accept", tt.accept)
			if code != tt.code || h.Get("Content-Type") != tt.ct {
				t.Fatalf("%d %s, want %d %s: %.200s", code, h.Get("Content-Type"), tt.code, tt.ct, b)
			}
			if tt.kind != "" && !bytes.Contains(b, []byte(`"kind":"`+tt.kind+`"`)) {
				t.Fatalf("want kind %s: %.200s", tt.kind, b)
			}
		})
	}
	_, _, b := call(t, srv, "GET", "/apis", "", "Accept", agg)
	for _, want := range []string{`"name":"apiextensions.k8s.io"`, `"resource":"selfsubjectaccessreviews"`,
		`"responseKind":{"group":"example.com","version":"v1","kind":"Widget"}`, `"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("aggregated discovery lacks %s", want)
		}
	}
}

func TestOpenAPI(t *testing.T) {
	srv := wireServer(t, Config{})
	code, h, b := call(t, srv, "GET", "/openapi/v3", "")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var root struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	want := []string{"api/v1", "apis/apiextensions.k8s.io/v1", "apis/authorization.k8s.io/v1", "apis/authentication.k8s.io/v1", "apis/example.com/v1"}
	for _, gv := range want {
		if root.Paths[gv].ServerRelativeURL == "" {
			t.Fatalf("/openapi/v3 lacks %s: %s", gv, b)
		}
	}
	_ = h
	// Every served kind's PATCH carries the GVK extension and the
	// fieldValidation parameter: kubectl looks for exactly that.
	for gv, kinds := range map[string][]string{"api/v1": {"ConfigMap", "Secret", "Namespace"}, "apis/apiextensions.k8s.io/v1": {"CustomResourceDefinition"}, "apis/example.com/v1": {"Widget"}} {
		code, h, b := call(t, srv, "GET", root.Paths[gv].ServerRelativeURL, "")
		if code != 200 || h.Get("Etag") == "" {
			t.Fatalf("%s: %d %v", gv, code, h)
		}
		if c2, _, _ := call(t, srv, "GET", root.Paths[gv].ServerRelativeURL, "", "If-None-Match", h.Get("Etag")); c2 != http.StatusNotModified {
			t.Fatalf("%s with a matching If-None-Match: %d", gv, c2)
		}
		var doc struct {
			Paths      map[string]map[string]json.RawMessage `json:"paths"`
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		type operation struct {
			GVK    map[string]string `json:"x-kubernetes-group-version-kind"`
			Action string            `json:"x-kubernetes-action"`
			Params []struct {
				Name, In string
			} `json:"parameters"`
		}
		for _, kind := range kinds {
			found := false
			for _, item := range doc.Paths {
				var op operation
				if raw, ok := item["patch"]; !ok || json.Unmarshal(raw, &op) != nil || op.GVK["kind"] != kind || op.Action != "patch" {
					continue
				}
				for _, p := range op.Params {
					found = found || (p.Name == "fieldValidation" && p.In == "query")
				}
			}
			if !found {
				t.Errorf("%s: no PATCH for %s with fieldValidation", gv, kind)
			}
		}
		for name, s := range doc.Components.Schemas {
			if _, ok := s["description"]; !ok && !strings.HasPrefix(name, "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1") && !strings.Contains(name, "Time") && !strings.Contains(name, "Quantity") && !strings.Contains(name, "JSON") && !strings.Contains(name, "IntOrString") {
				t.Errorf("%s: schema %s has no description", gv, name)
			}
		}
	}
	// The custom resource's schema: structural schema plus what kube adds.
	_, _, b = call(t, srv, "GET", root.Paths["apis/example.com/v1"].ServerRelativeURL, "")
	for _, want := range []string{`"com.example.v1.Widget":{`, `"x-kubernetes-group-version-kind":[{"group":"example.com","kind":"Widget","version":"v1"}]`,
		`"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"`, `"operationId":"patchExampleComV1NamespacedWidgetStatus"`,
		`"io.k8s.api.autoscaling.v1.Scale"`, `"default":{"description":"a field named default","type":"string"}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("CR document lacks %s", want)
		}
	}
	// v2: the same kinds; defaults dropped, properties named default kept.
	_, _, b = call(t, srv, "GET", "/openapi/v2", "")
	for _, want := range []string{`"io.k8s.api.core.v1.ConfigMap":{`, `"com.example.v1.Widget":{`, `"/apis/example.com/v1/namespaces/{namespace}/widgets"`,
		`"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition":{`, `"default":{"description":"a field named default","type":"string"}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("/openapi/v2 lacks %s", want)
		}
	}
	if bytes.Contains(b, []byte(`"replicas":{"default":1`)) {
		t.Error("/openapi/v2 keeps a default")
	}
	// Deleting the CRD removes its group-version.
	if code, _, b := call(t, srv, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", ""); code != 200 {
		t.Fatalf("delete CRD: %d %s", code, b)
	}
	if _, _, b := call(t, srv, "GET", "/openapi/v3", ""); bytes.Contains(b, []byte("apis/example.com/v1")) {
		t.Fatalf("deleted CRD still published: %s", b)
	}
}

func TestSelfSubjectReviews(t *testing.T) {
	rules, err := auth.ParseRules([]byte("rules:\n- users: [alice]\n  verbs: [get, list]\n  resources: [configmaps, widgets.example.com]\n  namespaces: [demo]\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := wireServer(t, Config{Tokens: auth.Tokens{"admin": {Name: "root", UID: "r1", Groups: []string{auth.Masters, auth.Authenticated}},
		"alice": {Name: "alice", UID: "a1", Groups: []string{"devs", auth.Authenticated}}}, Rules: rules})
	ssar := func(ra string) string {
		return `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":` + ra + `}`
	}
	for _, tt := range []struct {
		name, token, path, body string
		code                    int
		want                    string
	}{
		{"alice may list in demo", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"resourceAttributes":{"namespace":"demo","verb":"list","resource":"configmaps"}}`), 201, `"status":{"allowed":true}`},
		{"alice may not elsewhere", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"resourceAttributes":{"namespace":"x","verb":"list","resource":"configmaps"}}`), 201, `"status":{"allowed":false}`},
		{"group-qualified", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"resourceAttributes":{"namespace":"demo","verb":"get","group":"example.com","resource":"widgets"}}`), 201, `"allowed":true`},
		{"non-resource", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"nonResourceAttributes":{"path":"/apis","verb":"get"}}`), 201, `"allowed":true`},
		{"neither", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{}`), 422, `spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"both", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}`), 422, `cannot be specified in combination with resourceAttributes`},
		{"admin may anything", "admin", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar(`{"resourceAttributes":{"verb":"delete","resource":"secrets"}}`), 201, `"allowed":true`},
		{"rules review", "alice", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{"namespace":"demo"}}`, 201, `{"verbs":["get","list"],"apiGroups":[""],"resources":["configmaps"]},{"verbs":["get","list"],"apiGroups":["example.com"],"resources":["widgets"]}`},
		{"rules review elsewhere", "alice", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{"namespace":"x"}}`, 201, `"resourceRules":[{"verbs":["create"],"apiGroups":["authorization.k8s.io"]`},
		{"rules review without a namespace", "alice", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{}}`, 400, `"message":"no namespace on request","reason":"BadRequest"`},
		{"whoami", "alice", "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{}`, 201, `"status":{"userInfo":{"username":"alice","uid":"a1","groups":["devs","system:authenticated"]}}`},
		{"GET is 405", "alice", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", 405, `MethodNotAllowed`},
		{"unknown resource", "alice", "/apis/authorization.k8s.io/v1/subjectaccessreviews", "{}", 404, `NotFound`},
		{"discovery", "alice", "/apis/authorization.k8s.io/v1", "", 200, `"name":"selfsubjectrulesreviews","singularName":"selfsubjectrulesreview","namespaced":false,"kind":"SelfSubjectRulesReview","verbs":["create"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method := "POST"
			if tt.body == "" {
				method = "GET"
			}
			code, _, b := call(t, srv, method, tt.path, tt.body, "Authorization", "Bearer "+tt.token, "Content-Type", "application/json")
			if code != tt.code || !bytes.Contains(b, []byte(tt.want)) {
				t.Fatalf("%d %s, want %d and %s", code, b, tt.code, tt.want)
			}
		})
	}
}
