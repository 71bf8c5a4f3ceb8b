package resources

import (
	"bytes"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every Kubernetes protobuf envelope.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

var _ = Describe("Protobuf encoding", fw.Area(area), func() {
	f := fw.New(area)

	It("wraps a built-in object in the magic number and an Unknown envelope", fw.Req("RES-PROTOBUF-ENVELOPE"), func() {
		name := f.Name("pb")
		f.CreateConfigMap(name, map[string]string{"k": "v"})
		r := f.Get(f.ConfigMapPath(name), fw.Accept(protobufType))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		env := decodeEnvelope(r, "ConfigMap")
		Expect(env.APIVersion).To(Equal("v1"))
		var cm corev1.ConfigMap
		Expect(cm.Unmarshal(env.Raw)).To(Succeed(), "raw holds the ConfigMap in protobuf")
		Expect(cm.Name).To(Equal(name))
		Expect(cm.Data).To(HaveKeyWithValue("k", "v"))
	})

	It("answers 406 when protobuf is the only acceptable type for a custom resource", fw.Req("RES-PROTOBUF-CUSTOM-RESOURCE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("w")
		crd.Create("v1", name, map[string]any{"replicas": 1})
		r := f.Get(crd.Path("v1", name), fw.Accept(protobufType))
		Expect(r.Code).To(Equal(http.StatusNotAcceptable), "%s", r)
		// The refusal is a Status in the requested (protobuf) form.
		status := decodeEnvelope(r, "Status")
		var st metav1.Status
		Expect(st.Unmarshal(status.Raw)).To(Succeed())
		Expect(string(st.Reason)).To(Equal("NotAcceptable"))
	})
})

// decodeEnvelope checks a protobuf answer's magic number and Unknown wrapper
// and returns the wrapper.
func decodeEnvelope(r *fw.Response, kind string) runtime.Unknown {
	GinkgoHelper()
	Expect(r.Header.Get("Content-Type")).To(HavePrefix(protobufType), "%s", r)
	Expect(bytes.HasPrefix(r.Body, protobufMagic)).To(BeTrue(), "the body starts with k8s\\x00: % x", r.Body[:min(8, len(r.Body))])
	var env runtime.Unknown
	Expect(env.Unmarshal(r.Body[len(protobufMagic):])).To(Succeed(), "the rest is an Unknown message")
	Expect(env.Kind).To(Equal(kind))
	return env
}
