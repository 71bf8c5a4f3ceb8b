package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// restConfig is a client-go config for s speaking protobuf, as kubectl and
// controllers do for built-in kinds.
func restConfig(t *testing.T, s *Server) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.BearerToken = s.Token() // clientcmd drops tokens for plain-HTTP servers
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = protobufType + ",application/json"
	cfg.Timeout = 30 * time.Second
	return cfg
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestClientGoProtobuf drives the server with client-go's generated
// clientsets over protobuf: a CRD through the apiextensions clientset (the
// bug of issue #13: a 400), configmaps with a watch through the core one.
func TestClientGoProtobuf(t *testing.T) {
	s, c := startTest(t)
	cfg := restConfig(t, s)
	ctx := ctxT(t)

	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.pb.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "pb.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}},
		},
	}
	created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD over protobuf: %v", err)
	}
	if created.Spec.Names.Kind != "Gadget" || created.ResourceVersion == "" || created.UID == "" {
		t.Fatalf("created CRD: %+v", created.ObjectMeta)
	}
	list, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != crd.Name {
		t.Fatalf("list CRDs: %v %+v", err, list)
	}

	// The custom resource has no protobuf form: the dynamic client's JSON
	// works, and a protobuf-only Accept is kube-apiserver's 406 (the dynamic
	// client always asks for JSON, so the raw client asks).
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "pb.example.com", Version: "v1", Resource: "gadgets"}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pb.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"size": int64(3)}}}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create custom resource: %v", err)
	}
	if r := c.do("GET", "/apis/pb.example.com/v1/namespaces/default/gadgets/g1", nil, "Accept", protobufType); r.Code != http.StatusNotAcceptable {
		t.Fatalf("custom resource with a protobuf-only Accept: want 406, got %d %q", r.Code, r.Body)
	}

	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := core.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm, err := core.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap over protobuf: %v", err)
	}
	ev := <-w.ResultChan()
	got, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != watch.Added || !ok || got.Name != "c1" || got.Data["a"] != "b" || got.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("watch event: %v %#v", ev.Type, ev.Object)
	}
	if err := core.CoreV1().ConfigMaps("default").Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.CoreV1().ConfigMaps("default").Get(ctx, "c1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted configmap: want a protobuf 404 Status, got %v", err)
	}

	// Aggregated discovery, as client-go asks for it.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	for _, want := range []string{"apiextensions.k8s.io", "authorization.k8s.io", "pb.example.com"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("discovery groups %v lack %s", names, want)
		}
	}
	if len(resources) == 0 {
		t.Error("discovery: no resources")
	}
}

// TestListWatchSameBytes: client-go's watch-list inconsistency detector
// compares objects from a LIST with those from a WATCH byte for byte, so
// managedFields' raw fieldsV1 must be encoded alike (compact JSON, as
// kube-apiserver answers non-human clients).
func TestListWatchSameBytes(t *testing.T) {
	s, c := startTest(t)
	if r := c.do("POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "c1", "labels": map[string]any{"a": "b"}}}); r.Code != 201 {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	list := c.do("GET", "/api/v1/namespaces/default/configmaps", nil, "User-Agent", "client-go-test")
	if bytes.Contains(list.Body, []byte("\n  ")) {
		t.Fatalf("list for a non-human client is indented:\n%s", list.Body)
	}
	var l struct {
		Items []struct {
			Metadata struct {
				ManagedFields []struct {
					FieldsV1 json.RawMessage `json:"fieldsV1"`
				} `json:"managedFields"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(list.Body, &l); err != nil || len(l.Items) != 1 || len(l.Items[0].Metadata.ManagedFields) == 0 {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	req, _ := http.NewRequest("GET", s.URL()+"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=5", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.Header.Set("User-Agent", "client-go-test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ev struct {
		Object struct {
			Metadata struct {
				ManagedFields []struct {
					FieldsV1 json.RawMessage `json:"fieldsV1"`
				} `json:"managedFields"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if err := json.NewDecoder(res.Body).Decode(&ev); err != nil || len(ev.Object.Metadata.ManagedFields) == 0 {
		t.Fatalf("watch event: %v", err)
	}
	if a, b := l.Items[0].Metadata.ManagedFields[0].FieldsV1, ev.Object.Metadata.ManagedFields[0].FieldsV1; !bytes.Equal(a, b) {
		t.Fatalf("fieldsV1 differs between LIST and WATCH:\n%s\n%s", a, b)
	}
}
