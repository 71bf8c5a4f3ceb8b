package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apiconform/apiconform/refserver/auth"
)

// TestMaxRequestsInFlight: at the limit a short request gets kube-apiserver's
// 429 TooManyRequests with Retry-After; watches and admins are exempt, and a
// freed slot admits the next request.
func TestMaxRequestsInFlight(t *testing.T) {
	reg, _ := testKinds(t)
	h := New(Config{Registry: reg, MaxRequestsInFlight: 1, Logf: t.Logf, Tokens: auth.Tokens{
		"user":  {Name: "alice", Groups: []string{"system:authenticated"}},
		"admin": {Name: "root", Groups: []string{"system:masters"}},
	}})
	get := func(token, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	h.inFlight <- struct{}{} // one request is in flight

	tests := []struct {
		name, token, path string
		want              int
	}{
		{"short request at the limit", "user", "/api/v1/namespaces/default/configmaps", http.StatusTooManyRequests},
		{"admin is exempt", "admin", "/version", http.StatusOK},
		{"watch is exempt", "user", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(tt.token, tt.path)
			if rec.Code != tt.want {
				t.Fatalf("GET %s: %d, want %d: %s", tt.path, rec.Code, tt.want, rec.Body)
			}
			if tt.want != http.StatusTooManyRequests {
				return
			}
			var st struct {
				Kind, Reason, Message string
				Code                  int
				Details               struct{ RetryAfterSeconds int }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatal(err)
			}
			if st.Kind != "Status" || st.Reason != "TooManyRequests" || st.Code != 429 ||
				st.Message != "Too many requests, please try again later." || st.Details.RetryAfterSeconds != 1 {
				t.Errorf("429 Status = %+v", st)
			}
			if rec.Header().Get("Retry-After") != "1" {
				t.Errorf("Retry-After = %q, want 1", rec.Header().Get("Retry-After"))
			}
		})
	}
	<-h.inFlight // the request in flight finishes
	if rec := get("user", "/api/v1/namespaces/default/configmaps"); rec.Code != http.StatusOK {
		t.Fatalf("after the slot is freed: %d %s", rec.Code, rec.Body)
	}
	if n := len(h.inFlight); n != 0 {
		t.Fatalf("%d slots still taken after the request finished", n)
	}
}
