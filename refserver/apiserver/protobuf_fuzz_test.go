package apiserver

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzProtobufBody: any protobuf body gives JSON or a Status error (400 or
// 415), never a panic (kube-apiserver panics on some; see protobuf.go).
func FuzzProtobufBody(f *testing.F) {
	var buf bytes.Buffer
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	if err := pbSerializer.Encode(cm, &buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("k8s\x00"))
	f.Add([]byte("k8s\x00junk"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		j, err := protobufToJSON(body)
		if err != nil {
			if st := statusOf(err); st.Code != 400 && st.Code != 415 {
				t.Fatalf("status %d for %q", st.Code, body)
			}
			return
		}
		if len(j) == 0 || j[0] != '{' {
			t.Fatalf("not a JSON object: %q", j)
		}
	})
}

// FuzzAccept: any Accept header negotiates or refuses, never panics, and a
// refusal is a 406.
func FuzzAccept(f *testing.F) {
	for _, s := range []string{"", "application/json", protobufType + ";stream=watch", "application/json;as=Table;g=meta.k8s.io;v=v1",
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, */*;q=0.1", ";;;,,=", "a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		negotiateFor(accept, true)
		negotiateFor(accept, false)
	})
}
