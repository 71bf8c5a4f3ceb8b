package refserver

import (
	"fmt"
	"testing"
)

// Lists and gets written from pre-encoded bytes must be byte for byte what
// the object path writes; an Accept naming protobuf second takes the object path.
func TestEncodedAnswersMatchObjectPath(t *testing.T) {
	_, c := startTest(t)
	c.ns("lw")
	c.mustCode(c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD("Namespaced")), 201)
	for i := 0; i < 5; i++ {
		c.mustCode(c.do("POST", "/api/v1/namespaces/lw/configmaps", cm(fmt.Sprintf("c%d", i), map[string]string{"k": "<v&>", "n": fmt.Sprint(i)}, map[string]string{"i": fmt.Sprint(i % 2)})), 201)
		c.mustCode(c.do("POST", "/apis/example.com/v1/namespaces/lw/widgets", fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w%d"},"spec":{"replicas":%d,"free":{"big":12345678901234567890,"f":1.5}}}`, i, i)), 201)
	}
	// Changed objects are encoded anew at their new revision.
	c.mustCode(c.do("PATCH", "/api/v1/namespaces/lw/configmaps/c1", `{"data":{"k":"changed"}}`, "Content-Type", "application/merge-patch+json"), 200)
	for _, path := range []string{
		"/api/v1/namespaces/lw/configmaps",
		"/api/v1/namespaces/lw/configmaps?limit=2",
		"/api/v1/configmaps?labelSelector=i%3D1",
		"/api/v1/namespaces",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"/apis/example.com/v1/namespaces/lw/widgets",
		"/apis/example.com/v1/widgets?limit=3",
		"/api/v1/namespaces/lw/secrets",
		"/api/v1/namespaces/lw/configmaps/c1",
		"/api/v1/namespaces/lw/configmaps/c2?resourceVersion=0",
		"/api/v1/namespaces/lw/configmaps/missing",
		"/api/v1/namespaces/lw",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
		"/apis/example.com/v1/namespaces/lw/widgets/w2",
		"/apis/example.com/v1/namespaces/lw/widgets/w2/status",
		"/apis/example.com/v1/namespaces/lw/widgets/w2/scale",
	} {
		t.Run(path, func(t *testing.T) {
			for round := 0; round < 2; round++ { // the second round reads the cache
				fast := c.do("GET", path, nil)
				slow := c.do("GET", path, nil, "Accept", "application/json, application/vnd.kubernetes.protobuf;q=0.5")
				if fast.Code != slow.Code || string(fast.Body) != string(slow.Body) {
					t.Fatalf("encoded answer differs: %d %s\nobject path: %d %s", fast.Code, fast.Body, slow.Code, slow.Body)
				}
				if fast.Header.Get("Content-Type") != slow.Header.Get("Content-Type") || fast.Header.Get("Cache-Control") != slow.Header.Get("Cache-Control") {
					t.Fatalf("headers differ: %v vs %v", fast.Header, slow.Header)
				}
			}
		})
	}
}
