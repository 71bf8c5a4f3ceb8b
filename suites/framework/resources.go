package framework

import (
	"net/http"

	"github.com/onsi/gomega"
)

// ConfigMapsPath is the spec namespace's configmap collection URL path.
func (f *Framework) ConfigMapsPath() string {
	return "/api/v1/namespaces/" + f.Namespace + "/configmaps"
}

// ConfigMapPath is the URL path of one configmap in the spec namespace.
func (f *Framework) ConfigMapPath(name string) string { return f.ConfigMapsPath() + "/" + name }

// ConfigMap builds a configmap object (as a JSON-encodable map).
func ConfigMap(name string, data map[string]string) map[string]any {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name},
	}
	if data != nil {
		obj["data"] = data
	}
	return obj
}

// SetMeta sets metadata.<key> of an object built as a map (ConfigMap,
// CRD.Object) and returns the object.
func SetMeta(obj map[string]any, key string, value any) map[string]any {
	obj["metadata"].(map[string]any)[key] = value
	return obj
}

// CreateConfigMap creates a configmap and expects 201 Created.
func (f *Framework) CreateConfigMap(name string, data map[string]string, opts ...Option) *Response {
	r := f.Post(f.ConfigMapsPath(), ConfigMap(name, data), opts...)
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusCreated), "create configmap: %s", r)
	return r
}

// GetConfigMap reads a configmap (any status; the caller checks it).
func (f *Framework) GetConfigMap(name string, opts ...Option) *Response {
	return f.Get(f.ConfigMapPath(name), opts...)
}

// ListConfigMaps lists the spec namespace's configmaps and expects 200.
func (f *Framework) ListConfigMaps(opts ...Option) *Response {
	r := f.Get(f.ConfigMapsPath(), opts...)
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusOK), "list configmaps: %s", r)
	return r
}

// DeleteConfigMap deletes a configmap (any status; the caller checks it).
func (f *Framework) DeleteConfigMap(name string, opts ...Option) *Response {
	return f.Delete(f.ConfigMapPath(name), nil, opts...)
}
