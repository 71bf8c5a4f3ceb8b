package faults

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// pbFrame is one protobuf watch frame: a length, then a WatchEvent whose
// object is enveloped (only a Status is needed here).
func pbFrame(t *testing.T, typ string, code int32) []byte {
	t.Helper()
	st, err := (&metav1.Status{Code: code}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Status"}, Raw: st}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ev, err := (&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: append([]byte("k8s\x00"), u...)}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...)
}

func pbEncode(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := clientsProtobuf.Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// clientsBackend plays the API handler for the clients faults' tests.
func clientsBackend(t *testing.T, seen *string) http.HandlerFunc {
	jsonEvents := `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}` + "\n" +
		`{"type":"ERROR","object":{"kind":"Status","code":410}}` + "\n"
	pbEvents := append(append(pbFrame(t, "ADDED", 0), pbFrame(t, "MODIFIED", 0)...), pbFrame(t, "ERROR", 410)...)
	resList := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get"}}}}
	return func(w http.ResponseWriter, r *http.Request) {
		*seen = r.URL.RawQuery
		pb := strings.Contains(r.Header.Get("Accept"), pbType)
		ct, body := "application/json", ""
		switch p := r.URL.Path; {
		case r.URL.Query().Get("watch") == "1" && pb:
			ct, body = pbType+";stream=watch", string(pbEvents)
		case r.URL.Query().Get("watch") == "1":
			body = jsonEvents
		case p == "/api/v1" && pb:
			ct, body = pbType, string(pbEncode(t, resList))
		case p == "/api/v1":
			body = `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","namespaced":true,"kind":"ConfigMap","verbs":["get"]}]}`
		case p == "/apis":
			ct = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
			body = `{"kind":"APIGroupDiscoveryList","items":[{"versions":[{"version":"v1","resources":[{"resource":"things","scope":"Namespaced"}]}]}]}`
		case p == "/openapi/v3/api/v1":
			body = `{"paths":{"/api/v1/x":{"parameters":[{"name":"fieldValidation"},{"name":"pretty"}],` +
				`"patch":{"parameters":[{"name":"dryRun"},{"name":"fieldValidation"}]}}},` +
				`"components":{"schemas":{"io.k8s.api.core.v1.ConfigMap":{"x-kubernetes-group-version-kind":[{"kind":"ConfigMap"}]}}}}`
		case strings.HasSuffix(p, "/selfsubjectaccessreviews"):
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"kind":"SelfSubjectAccessReview","status":{"allowed":true,"reason":"allowed by a rule"}}`)
			return
		case r.URL.Query().Get("limit") == "1":
			body = `{"kind":"ConfigMapList","metadata":{"continue":"after-one"},"items":[{}]}`
		default:
			body = `{"kind":"ConfigMapList","metadata":{},"items":[]}`
		}
		w.Header().Set("Content-Type", ct)
		_, _ = io.WriteString(w, body)
	}
}

func TestClientsFaults(t *testing.T) {
	const cms = "/api/v1/namespaces/ns/configmaps"
	for _, tc := range []struct {
		name, fault, method, path, accept, contentType string
		code                                           int
		want, notWant                                  []string
		query                                          string // what the API handler saw last
	}{
		{name: "json watch without MODIFIED", fault: WatchNoModified, path: cms + "?watch=1", code: 200,
			want: []string{`"ADDED"`, `"ERROR"`}, notWant: []string{`"MODIFIED"`}},
		{name: "protobuf watch without MODIFIED", fault: WatchNoModified, path: cms + "?watch=1", accept: pbType, code: 200,
			want: []string{"ADDED", "ERROR"}, notWant: []string{"MODIFIED"}},
		{name: "json watch without its 410", fault: WatchExpiredNo410, path: cms + "?watch=1", code: 200,
			want: []string{`"ADDED"`, `"MODIFIED"`}, notWant: []string{`"ERROR"`}},
		{name: "protobuf watch without its 410", fault: WatchExpiredNo410, path: cms + "?watch=1", accept: pbType, code: 200,
			want: []string{"ADDED", "MODIFIED"}, notWant: []string{"ERROR"}},
		{name: "protobuf body refused", fault: ProtobufBodyRefused, method: "POST", path: cms, contentType: pbType, code: 415,
			want: []string{`"reason":"UnsupportedMediaType"`}},
		{name: "json body accepted", fault: ProtobufBodyRefused, method: "POST", path: cms, contentType: "application/json", code: 200},
		{name: "legacy discovery cluster-scoped", fault: DiscoveryClusterScoped, path: "/api/v1", code: 200,
			want: []string{`"namespaced":false`}, notWant: []string{`"namespaced":true`}},
		{name: "aggregated discovery cluster-scoped", fault: DiscoveryClusterScoped, path: "/apis", code: 200,
			want: []string{`"scope":"Cluster"`}, notWant: []string{`Namespaced`}},
		{name: "openapi without gvk", fault: OpenAPIV3NoGVK, path: "/openapi/v3/api/v1", code: 200,
			want: []string{`fieldValidation`}, notWant: []string{`x-kubernetes-group-version-kind`}},
		{name: "openapi without fieldValidation", fault: OpenAPIV3NoFieldValidation, path: "/openapi/v3/api/v1", code: 200,
			want: []string{`"pretty"`, `"dryRun"`, `x-kubernetes-group-version-kind`}, notWant: []string{`fieldValidation`}},
		{name: "access review denied", fault: AccessReviewDenies, method: "POST", path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			contentType: "application/json", code: 201, want: []string{`"allowed":false`}, notWant: []string{`reason`}},
		{name: "continue skips an item", fault: ContinueSkipsItem, path: cms + "?limit=3&continue=tok", code: 200,
			query: "continue=after-one&limit=3"},
		{name: "first page untouched", fault: ContinueSkipsItem, path: cms + "?limit=3", code: 200, query: "limit=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Parse(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			var seen string
			method := tc.method
			if method == "" {
				method = "GET"
			}
			// A cancelled request: a watch that swallowed its 410 ends at once.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			req := httptest.NewRequestWithContext(ctx, method, tc.path, strings.NewReader("{}"))
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			set.Wrap(clientsBackend(t, &seen)).ServeHTTP(rec, req)
			expectAnswer(t, rec, tc.code, tc.want, tc.notWant)
			if tc.query != "" && seen != tc.query {
				t.Errorf("the handler saw query %q, want %q", seen, tc.query)
			}
		})
	}
}

// Discovery in protobuf is edited too, and stays protobuf.
func TestDiscoveryClusterScopedProtobuf(t *testing.T) {
	set, _ := Parse(DiscoveryClusterScoped)
	var seen string
	req := httptest.NewRequest("GET", "/api/v1", nil)
	req.Header.Set("Accept", pbType)
	rec := httptest.NewRecorder()
	set.Wrap(clientsBackend(t, &seen)).ServeHTTP(rec, req)
	obj, _, err := clientsProtobuf.Decode(rec.Body.Bytes(), nil, nil)
	if err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	l, ok := obj.(*metav1.APIResourceList)
	if !ok || len(l.APIResources) != 1 || l.APIResources[0].Namespaced || l.APIResources[0].Name != "configmaps" {
		t.Fatalf("got %#v", obj)
	}
}
