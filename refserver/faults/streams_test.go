package faults

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// streamsBackend plays the API handler for the streams faults' tests: it
// remembers the query and body it saw last.
func streamsBackend(seenQuery, seenBody *string) http.HandlerFunc {
	events := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}}}` + "\n" +
		`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"6"}}}` + "\n" +
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}` + "\n"
	return func(w http.ResponseWriter, r *http.Request) {
		*seenQuery = r.URL.RawQuery
		b, _ := io.ReadAll(r.Body)
		*seenBody = string(b)
		body := ""
		switch p := r.URL.Path; {
		case r.URL.Query().Get("watch") == "1":
			body = events
		case p == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com":
			body = `{"kind":"CustomResourceDefinition","spec":{"versions":[{"name":"v1","storage":true},{"name":"v2","storage":false}]}}`
		case strings.HasPrefix(p, "/apis/example.com/v2/namespaces/ns/things/"):
			body = `{"kind":"Thing","apiVersion":"example.com/v2","metadata":{"name":"t"}}`
		case strings.HasPrefix(p, "/apis/example.com/v2/"):
			body = `{"kind":"ThingList","apiVersion":"example.com/v2","metadata":{},"items":[{"kind":"Thing","apiVersion":"example.com/v2"}]}`
		case strings.HasPrefix(p, "/apis/"+frobberGroup+"/v6/"):
			body = `{"kind":"Frobber","apiVersion":"` + frobberGroup + `/v6","param":"x","params":["x","y"]}`
		default:
			body = `{"kind":"ConfigMapList","metadata":{},"items":[]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

func TestStreamsFaults(t *testing.T) {
	const (
		cms = "/api/v1/namespaces/ns/configmaps"
		fr  = "/apis/" + frobberGroup + "/v6/namespaces/ns/frobbers"
	)
	for _, tc := range []struct {
		name, fault, method, path, contentType, body string
		code                                         int
		want, notWant                                []string
		query, sentBody                              string // what the API handler saw
	}{
		{name: "watch from N served from now", fault: WatchIgnoresResourceVersion, path: cms + "?watch=1&resourceVersion=7", code: 200,
			query: "watch=1"},
		{name: "watch from 0 untouched", fault: WatchIgnoresResourceVersion, path: cms + "?resourceVersion=0&watch=1", code: 200,
			query: "resourceVersion=0&watch=1"},
		{name: "streaming list untouched", fault: WatchIgnoresResourceVersion, path: cms + "?resourceVersion=7&sendInitialEvents=true&watch=1",
			code: 200, query: "resourceVersion=7&sendInitialEvents=true&watch=1"},
		{name: "events without type meta", fault: WatchEventsWithoutTypeMeta, path: cms + "?watch=1", code: 200,
			want: []string{`"name":"a"`, `"kind":"Status"`}, notWant: []string{`"kind":"ConfigMap"`}},
		{name: "bookmark carries the object", fault: BookmarkCarriesObject, path: cms + "?watch=1", code: 200,
			want: []string{`{"type":"BOOKMARK","object":{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"6"}}}`}},
		{name: "410 as 500", fault: WatchGoneInternalError, path: cms + "?watch=1", code: 200,
			want: []string{`"code":500`, `"reason":"InternalError"`}, notWant: []string{`410`, `Expired`}},
		{name: "bookmarks refused", fault: AllowWatchBookmarksRefused, path: cms + "?watch=1&allowWatchBookmarks=true", code: 400,
			want: []string{`"reason":"BadRequest"`, `allowWatchBookmarks`}},
		{name: "bookmarks of a streaming list accepted", fault: AllowWatchBookmarksRefused, code: 200,
			path: cms + "?watch=1&allowWatchBookmarks=true&sendInitialEvents=true", want: []string{`"BOOKMARK"`}},
		{name: "v6 create: param dropped", fault: FrobberV6ParamIgnored, method: "POST", path: fr, code: 200,
			body: `{"param":"a"}`, sentBody: `{}`},
		{name: "v6 update: param from params", fault: FrobberV6ParamIgnored, method: "PUT", path: fr + "/x", code: 200,
			body: `{"param":"c","params":["a","b"]}`, sentBody: `{"param":"a","params":["a","b"]}`},
		{name: "v6 merge patch: param dropped", fault: FrobberV6ParamIgnored, method: "PATCH", path: fr + "/x", code: 200,
			contentType: "application/merge-patch+json", body: `{"param":""}`, sentBody: `{}`},
		{name: "v7beta1 untouched", fault: FrobberV6ParamIgnored, method: "POST", code: 200,
			path: "/apis/" + frobberGroup + "/v7beta1/namespaces/ns/frobbers", body: `{"param":"a"}`, sentBody: `{"param":"a"}`},
		{name: "v6 update: cleared param refilled", fault: FrobberV6ParamRefilled, method: "PUT", path: fr + "/x", code: 200,
			body: `{"param":"","params":["a","b"]}`, sentBody: `{"param":"a","params":["a","b"]}`},
		{name: "v6 merge patch: clearing dropped", fault: FrobberV6ParamRefilled, method: "PATCH", path: fr + "/x", code: 200,
			contentType: "application/merge-patch+json", body: `{"height":2,"param":null}`, sentBody: `{"height":2}`},
		{name: "v6 update: changed param untouched", fault: FrobberV6ParamRefilled, method: "PUT", path: fr + "/x", code: 200,
			body: `{"param":"c","params":["a","b"]}`, sentBody: `{"param":"c","params":["a","b"]}`},
		{name: "v6 read: params cut", fault: FrobberV6ParamsTruncated, path: fr + "/x", code: 200,
			want: []string{`"params":["x"]`}},
		{name: "custom resource at its storage version", fault: CRDNoVersionConversion, path: "/apis/example.com/v2/namespaces/ns/things/t",
			code: 200, want: []string{`"apiVersion":"example.com/v1"`}, notWant: []string{`example.com/v2`}},
		{name: "custom resource list at its storage version", fault: CRDNoVersionConversion, path: "/apis/example.com/v2/namespaces/ns/things",
			code: 200, want: []string{`"items":[{"apiVersion":"example.com/v1","kind":"Thing"}]`}},
		{name: "PUT with a uid refused", fault: PutRefusesServerSetFields, method: "PUT", path: cms + "/x", code: 422,
			body: `{"metadata":{"name":"x","uid":"u"}}`, want: []string{`"reason":"Invalid"`, `"field":"metadata.uid"`}},
		{name: "PUT without server-set fields accepted", fault: PutRefusesServerSetFields, method: "PUT", path: cms + "/x", code: 200,
			body: `{"metadata":{"name":"x"}}`, sentBody: `{"metadata":{"name":"x"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Parse(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			method := tc.method
			if method == "" {
				method = "GET"
			}
			req := httptest.NewRequest(method, tc.path, strings.NewReader(tc.body))
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			var query, body string
			set.Wrap(streamsBackend(&query, &body)).ServeHTTP(rec, req)
			expectAnswer(t, rec, tc.code, tc.want, tc.notWant)
			if tc.query != "" && query != tc.query {
				t.Errorf("the handler saw query %q, want %q", query, tc.query)
			}
			if tc.sentBody != "" && body != tc.sentBody {
				t.Errorf("the handler saw body %q, want %q", body, tc.sentBody)
			}
		})
	}
}
