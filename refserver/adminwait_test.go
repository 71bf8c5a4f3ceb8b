package refserver

import "testing"

func TestAdminRevisionWait(t *testing.T) {
	_, c := startTest(t)
	c.ns("rw")
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"short wait", `{"revisionWait":"50ms"}`, 200},
		{"not a duration", `{"revisionWait":"soon"}`, 400},
		{"zero", `{"revisionWait":"0s"}`, 400},
		{"too long", `{"revisionWait":"2h"}`, 400},
		{"not JSON", `{`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.mustCode(c.do("POST", "/apiconform/admin/revision-wait", tc.body), tc.code)
		})
	}
	c.mustCode(c.do("GET", "/apiconform/admin/revision-wait", nil), 405)
	// With the short wait in force a future resourceVersion still answers kube-apiserver's 504.
	r := c.do("GET", "/api/v1/namespaces/rw/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", nil)
	c.mustCode(r, 504)
	if r.str("reason") != "Timeout" {
		t.Fatalf("504: %s", r.Body)
	}
}
