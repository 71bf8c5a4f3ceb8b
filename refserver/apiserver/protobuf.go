package apiserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// protobufType is the Kubernetes protobuf media type (the API concepts
// document's "Kubernetes Protobuf encoding"): a "k8s\x00" magic number and a
// runtime.Unknown envelope around the object's own message.
const protobufType = "application/vnd.kubernetes.protobuf"

// pbScheme knows the Go types of every built-in kind the server serves and
// of the meta types around them. A kind outside it (a custom resource, a
// Frobber) has no protobuf form: kube-apiserver answers 406/415 for those.
var pbScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, eventsv1.AddToScheme, coordinationv1.AddToScheme, rbacv1.AddToScheme, apiextensionsv1.AddToScheme,
		authorizationv1.AddToScheme, authenticationv1.AddToScheme, autoscalingv1.AddToScheme, apidiscoveryv2.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	metav1.AddMetaToScheme(s)
	// Discovery documents have protobuf forms too (kube-apiserver serves them).
	s.AddKnownTypes(schema.GroupVersion{Version: "v1"}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}()

var (
	pbSerializer = protobuf.NewSerializer(pbScheme, pbScheme)
	// pbRaw encodes without the envelope: the frames of a watch stream are
	// bare WatchEvent messages whose object is itself enveloped.
	pbRaw = protobuf.NewRawSerializer(pbScheme, pbScheme)
)

// hasProtobuf reports whether objects of gvk have a protobuf form here.
func hasProtobuf(gvk schema.GroupVersionKind) bool {
	return gvk.Kind != "" && pbScheme.Recognizes(gvk)
}

// kindHasProtobuf reports whether a served kind (group, version, kind) has
// a protobuf form.
func kindHasProtobuf(group, version, kind string) bool {
	return hasProtobuf(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
}

// typedOf converts a response value (a JSON-shaped registry object or list,
// or a typed meta value) to the Go type protobuf encodes; ok is false when
// the value has no protobuf form.
func typedOf(v any) (runtime.Object, bool) {
	switch o := v.(type) {
	case metav1.Status:
		o.Kind, o.APIVersion = "Status", "v1"
		return &o, true
	case *metav1.Status:
		return typedOf(*o)
	case runtime.Object:
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.Group == "" && gvk.Version == "" {
			gvk.Version = "v1" // APIVersions: kube-apiserver leaves its apiVersion empty
		}
		if !hasProtobuf(gvk) {
			return nil, false
		}
		return o, true
	case map[string]any:
		apiVersion, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil || !hasProtobuf(gv.WithKind(kind)) {
			return nil, false
		}
		obj, err := pbScheme.New(gv.WithKind(kind))
		if err != nil {
			return nil, false
		}
		b, err := json.Marshal(o)
		if err != nil || json.Unmarshal(b, obj) != nil {
			return nil, false
		}
		obj.GetObjectKind().SetGroupVersionKind(gv.WithKind(kind))
		return obj, true
	}
	return nil, false
}

// encodeProtobuf renders v in the Kubernetes protobuf envelope.
func encodeProtobuf(v any) ([]byte, bool) {
	obj, ok := typedOf(v)
	if !ok {
		return nil, false
	}
	var buf bytes.Buffer
	if err := pbSerializer.Encode(obj, &buf); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// protobufWatchFrame renders one watch event as kube-apiserver's protobuf
// stream does: a 4-byte big-endian length, then a bare WatchEvent whose
// object is an enveloped object.
func protobufWatchFrame(eventType string, object any) ([]byte, bool) {
	inner, ok := encodeProtobuf(object)
	if !ok {
		return nil, false
	}
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, 0, 0})
	ev := &metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: inner}}
	if err := pbRaw.Encode(ev, &buf); err != nil {
		return nil, false
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[:4], uint32(len(b)-4))
	return b, true
}

// protobufToJSON decodes a Kubernetes protobuf body into the JSON the rest
// of the request path reads; the envelope names the type. A type without a
// protobuf form here (a custom resource) is a 415, as the media type is
// unsupported for it.
func protobufToJSON(body []byte) ([]byte, error) {
	obj, gvk, err := pbSerializer.Decode(body, nil, nil)
	switch {
	case runtime.IsNotRegisteredError(err):
		return nil, errUnsupportedMedia()
	case err != nil:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
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
