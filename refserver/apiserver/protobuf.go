package apiserver

import (
	"encoding/json"
	"fmt"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Protobuf request bodies are accepted for the built-in kinds, because
// kubectl and client-go send them; responses are always JSON or YAML.
const protobufType = "application/vnd.kubernetes.protobuf"

var protoDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// protobufToJSON decodes a Kubernetes protobuf envelope into JSON.
func protobufToJSON(body []byte) ([]byte, error) {
	obj, gvk, err := protoDecoder.Decode(body, nil, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format: %v", err))
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp")
	}
	return json.Marshal(m)
}

// openAPIv2Protobuf converts the JSON swagger document to gnostic protobuf,
// the form kubectl asks for.
func openAPIv2Protobuf(doc []byte) ([]byte, error) {
	d, err := openapi_v2.ParseDocument(doc)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(d)
}
