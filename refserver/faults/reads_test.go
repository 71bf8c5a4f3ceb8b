package faults

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
)

// fakeAPI answers every request with code and body, and remembers the query it saw.
type fakeAPI struct {
	code  int
	body  string
	query url.Values
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.query = r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.code)
	_, _ = w.Write([]byte(f.body))
}

func TestReadsRequestFaults(t *testing.T) {
	const cms = "/api/v1/namespaces/ns/configmaps"
	for _, tc := range []struct {
		fault, url string
		want       url.Values
	}{
		{LimitIgnored, cms + "?limit=2", url.Values{}},
		{LimitIgnored, cms + "?limit=2&continue=t", url.Values{"limit": {"2"}, "continue": {"t"}}},
		{ListOptionsUnvalidated, cms + "?resourceVersionMatch=Exact", url.Values{}},
		{ListOptionsUnvalidated, cms + "?resourceVersionMatch=Exact&resourceVersion=0", url.Values{"resourceVersion": {"0"}}},
		{ListOptionsUnvalidated, cms + "?resourceVersionMatch=Exact&resourceVersion=5",
			url.Values{"resourceVersion": {"5"}, "resourceVersionMatch": {"Exact"}}},
		{ListOptionsUnvalidated, cms + "?continue=t&resourceVersion=5", url.Values{"continue": {"t"}}},
		{ListOptionsUnvalidated, cms + "?continue=t&resourceVersion=0", url.Values{"continue": {"t"}, "resourceVersion": {"0"}}},
		{ResourceVersionHex, cms + "/x?resourceVersion=000000000000007b", url.Values{"resourceVersion": {"123"}}},
	} {
		api := &fakeAPI{code: http.StatusOK, body: `{"kind":"ConfigMapList","metadata":{}}`}
		h := Set{tc.fault: true}.Wrap(api)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.url, nil))
		if api.query.Encode() != tc.want.Encode() {
			t.Errorf("%s %s: the handler saw %v, want %v", tc.fault, tc.url, api.query, tc.want)
		}
	}
}

func TestReadsAnswerFaults(t *testing.T) {
	const cms = "/api/v1/namespaces/ns/configmaps"
	token := base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":7,"start":"b\u0000"}`))
	badToken := `{"kind":"Status","code":400,"reason":"BadRequest","message":"invalid continue token: continue key is not valid"}`
	gone := `{"kind":"Status","code":410,"reason":"Expired","metadata":{"continue":"` + token + `"}}`
	list := `{"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","resourceVersion":"5"}}]}`
	for _, tc := range []struct {
		fault, url string
		code       int
		body       string
		check      func(code int, o map[string]any) bool
	}{
		{RV0ReadAsRevision, cms + "?resourceVersion=0", 200, list,
			func(code int, o map[string]any) bool { return code == 410 && o["reason"] == "Expired" }},
		{RV0ReadAsRevision, cms + "?resourceVersion=7", 200, list, func(code int, _ map[string]any) bool { return code == 200 }},
		{MalformedContinue500, cms + "?continue=x", 400, badToken,
			func(code int, o map[string]any) bool { return code == 500 && o["reason"] == "InternalError" }},
		{CompactedAnswers500, cms + "?resourceVersion=1&resourceVersionMatch=Exact", 410, gone,
			func(code int, o map[string]any) bool {
				return code == 500 && o["metadata"].(map[string]any)["continue"] == nil
			}},
		{RemainingCountZeroOnLast, cms, 200, list, func(_ int, o map[string]any) bool {
			return o["metadata"].(map[string]any)["remainingItemCount"] == 0.0
		}},
		{ContinueOnLastPage, cms + "?limit=1", 200, list, func(_ int, o map[string]any) bool {
			return tokenStart(o["metadata"].(map[string]any)["continue"]) == "a\x00"
		}},
		{ContinueOnLastPage, cms, 200, list, func(_ int, o map[string]any) bool {
			return o["metadata"].(map[string]any)["continue"] == nil
		}},
		{InconsistentTokenRestarts, cms + "?continue=t", 410, gone, func(_ int, o map[string]any) bool {
			return tokenStart(o["metadata"].(map[string]any)["continue"]) == "\x00"
		}},
		{ResourceVersionHex, cms, 200, list, func(_ int, o map[string]any) bool {
			item := o["items"].([]any)[0].(map[string]any)
			return o["metadata"].(map[string]any)["resourceVersion"] == "0000000000000007" &&
				item["metadata"].(map[string]any)["resourceVersion"] == "0000000000000005"
		}},
	} {
		api := &fakeAPI{code: tc.code, body: tc.body}
		w := httptest.NewRecorder()
		Set{tc.fault: true}.Wrap(api).ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.url, nil))
		var o map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &o); err != nil {
			t.Fatalf("%s %s: %v", tc.fault, tc.url, err)
		}
		if !tc.check(w.Code, o) {
			t.Errorf("%s %s: got %d %s", tc.fault, tc.url, w.Code, w.Body)
		}
	}
}

func tokenStart(t any) string {
	s, _ := t.(string)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "(not a token)"
	}
	var tok struct{ Start string }
	if json.Unmarshal(raw, &tok) != nil {
		return "(not a token)"
	}
	return tok.Start
}

func TestContinueRepeatsLastItem(t *testing.T) {
	in := base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":7,"start":"b\u0000"}`))
	if got := tokenStart(editToken(in, func(o map[string]any) { o["start"] = "b" })); got != "b" {
		t.Errorf("edited token starts at %q", got)
	}
	if got := editToken("not-a-token!", func(map[string]any) { t.Error("edited garbage") }); got != "not-a-token!" {
		t.Errorf("garbage changed to %q", got)
	}
}

func TestHexResourceVersions(t *testing.T) {
	for _, n := range []string{"1", "123", "18446744073709551615"} {
		o := map[string]any{"metadata": map[string]any{"resourceVersion": n}}
		toHexRV(o)
		hex := o["metadata"].(map[string]any)["resourceVersion"].(string)
		if len(hex) != 16 || fromHexRV(hex) != n {
			t.Errorf("%s: hex %q reads back as %q", n, hex, fromHexRV(hex))
		}
	}
	if fromHexRV("42") != "42" {
		t.Error("a decimal resourceVersion is kept")
	}
}

// historyAPI serves one configmap: "v2" at resourceVersion 7 as the latest
// state, "v1" in an Exact list at 6, nothing before.
type historyAPI struct{}

func (h *historyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	item := func(data string, rv int) string {
		return `{"metadata":{"name":"x","resourceVersion":"` + strconv.Itoa(rv) + `"},"data":{"k":"` + data + `"}}`
	}
	if r.URL.Path == "/api/v1/namespaces/ns/configmaps/x" {
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1",` + item("v2", 7)[1:]))
		return
	}
	switch q.Get("resourceVersion") {
	case "":
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[` + item("v2", 7) + `]}`))
	case "6":
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"6"},"items":[` + item("v1", 6) + `]}`))
	default:
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"` + q.Get("resourceVersion") + `"},"items":[]}`))
	}
}

func TestLaggingReads(t *testing.T) {
	const cm = "/api/v1/namespaces/ns/configmaps/x"
	for _, tc := range []struct {
		fault, url string
		code       int
		data       string // data.k of the object (or first item) answered
	}{
		{LaggingCacheReads, cm, 200, "v1"},
		{LaggingCacheReads, "/api/v1/namespaces/ns/configmaps", 200, "v1"},
		{LaggingCacheReads, cm + "?resourceVersion=7", 200, "v2"}, // not this fault's read
		{NotOlderThanUnwaited, cm + "?resourceVersion=7", 200, "v1"},
		{NotOlderThanUnwaited, cm + "?resourceVersion=6", 404, ""}, // the state at 5 has no x
		{NotOlderThanUnwaited, cm, 200, "v2"},
	} {
		w := httptest.NewRecorder()
		Set{tc.fault: true}.Wrap(&historyAPI{}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.url, nil))
		var o struct {
			Kind  string
			Data  struct{ K string }
			Items []struct{ Data struct{ K string } }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &o); err != nil {
			t.Fatalf("%s %s: %v", tc.fault, tc.url, err)
		}
		data := o.Data.K
		if len(o.Items) > 0 {
			data = o.Items[0].Data.K
		}
		if w.Code != tc.code || data != tc.data {
			t.Errorf("%s %s: got %d %s, want %d with data %q", tc.fault, tc.url, w.Code, w.Body, tc.code, tc.data)
		}
		if w.Code == http.StatusOK && o.Kind == "" {
			t.Errorf("%s %s: the answer lost its kind: %s", tc.fault, tc.url, w.Body)
		}
	}
}
