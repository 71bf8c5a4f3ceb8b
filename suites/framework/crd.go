package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// CRDVersion is one version of a test CRD.
type CRDVersion struct {
	Name    string
	Served  bool
	Storage bool
	// Schema is the openAPIV3Schema; nil means DefaultCRDSchema.
	Schema map[string]any
	// StatusSubresource enables /status.
	StatusSubresource bool
	// ScaleSubresource enables /scale on .spec.replicas and .status.replicas.
	ScaleSubresource bool
}

// CRDOptions describe a test CRD. Zero values give a namespaced kind "Widget"
// with one version v1 (DefaultCRDSchema, status subresource on).
type CRDOptions struct {
	Kind     string // CamelCase kind; default Widget
	Versions []CRDVersion
	Cluster  bool // cluster-scoped instead of namespaced
}

// CRD is a created, established and served custom resource definition.
type CRD struct {
	Name     string // <plural>.<group>
	Group    string // <random>.apiconform.test
	Kind     string
	Plural   string
	Versions []string
	f        *Framework
}

// SpecSchema is a custom resource's openAPIV3Schema whose spec has the
// schema spec (an object schema).
func SpecSchema(spec map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"spec": spec}}
}

// DefaultCRDSchema is a structural schema with spec.{replicas:int, color:string,
// nested:{size:int}} and status.{ready:bool, phase:string}.
func DefaultCRDSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"replicas": map[string]any{"type": "integer"},
					"color":    map[string]any{"type": "string"},
					"nested": map[string]any{
						"type":       "object",
						"properties": map[string]any{"size": map[string]any{"type": "integer"}},
					},
				},
			},
			"status": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"ready": map[string]any{"type": "boolean"},
					"phase": map[string]any{"type": "string"},
				},
			},
		},
	}
}

// CreateCRD creates a uniquely named CRD, waits until it is Established and its
// resource answers a list, and deletes it after the spec. Skips when the target
// serves no CRDs.
func (f *Framework) CreateCRD(o CRDOptions) *CRD {
	RequireCRDs()
	if o.Kind == "" {
		o.Kind = "Widget"
	}
	if len(o.Versions) == 0 {
		o.Versions = []CRDVersion{{Name: "v1", Served: true, Storage: true, StatusSubresource: true}}
	}
	c := &CRD{Group: randomSuffix(8) + ".apiconform.test", Kind: o.Kind, Plural: strings.ToLower(o.Kind) + "s", f: f}
	c.Name = c.Plural + "." + c.Group
	scope := "Namespaced"
	if o.Cluster {
		scope = "Cluster"
	}
	var versions []any
	for _, v := range o.Versions {
		schema := v.Schema
		if schema == nil {
			schema = DefaultCRDSchema()
		}
		ver := map[string]any{"name": v.Name, "served": v.Served, "storage": v.Storage,
			"schema": map[string]any{"openAPIV3Schema": schema}}
		subresources := map[string]any{}
		if v.StatusSubresource {
			subresources["status"] = map[string]any{}
		}
		if v.ScaleSubresource {
			subresources["scale"] = map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
		}
		if len(subresources) > 0 {
			ver["subresources"] = subresources
		}
		versions = append(versions, ver)
		c.Versions = append(c.Versions, v.Name)
	}
	body := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": c.Name},
		"spec": map[string]any{
			"group": c.Group, "scope": scope, "versions": versions,
			"names": map[string]any{"plural": c.Plural, "singular": strings.ToLower(o.Kind), "kind": o.Kind,
				"listKind": o.Kind + "List"},
		},
	}
	r := f.Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusCreated), "create CRD: %s", r)
	client := st().client
	ginkgo.DeferCleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), client.requestTimeout)
		defer cancel()
		_, _ = client.Do(ctx, Request{Method: "DELETE", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + c.Name})
	})

	// Established, then served in every served version: poll with a deadline.
	gomega.EventuallyWithOffset(1, func(g gomega.Gomega) {
		r := f.Get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + c.Name)
		g.Expect(r.Code).To(gomega.Equal(http.StatusOK))
		g.Expect(r.Str(`status.conditions.#(type=="Established").status`)).To(gomega.Equal("True"), "Established")
		for _, v := range o.Versions {
			if !v.Served {
				continue
			}
			lr := f.Get(c.ListPath(v.Name, f.Namespace))
			g.Expect(lr.Code).To(gomega.Equal(http.StatusOK), "list %s: %s", v.Name, lr)
		}
	}).WithTimeout(st().client.requestTimeout).WithPolling(50 * time.Millisecond).Should(gomega.Succeed())
	return c
}

// APIVersion is "<group>/<version>".
func (c *CRD) APIVersion(version string) string { return c.Group + "/" + version }

// ListPath is the collection URL of version in namespace ns ("" for cluster scope).
func (c *CRD) ListPath(version, ns string) string {
	if ns == "" {
		return fmt.Sprintf("/apis/%s/%s/%s", c.Group, version, c.Plural)
	}
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", c.Group, version, ns, c.Plural)
}

// Path is the URL of one object of version in the spec namespace.
func (c *CRD) Path(version, name string) string {
	return c.ListPath(version, c.f.Namespace) + "/" + name
}

// Object builds a custom object of version with the given spec (may be nil).
func (c *CRD) Object(version, name string, spec map[string]any) map[string]any {
	obj := map[string]any{
		"apiVersion": c.APIVersion(version), "kind": c.Kind,
		"metadata": map[string]any{"name": name},
	}
	if spec != nil {
		obj["spec"] = spec
	}
	return obj
}

// Create posts a custom object in the spec namespace and expects 201.
func (c *CRD) Create(version, name string, spec map[string]any) *Response {
	r := c.f.Post(c.ListPath(version, c.f.Namespace), c.Object(version, name, spec))
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusCreated), "create %s: %s", c.Kind, r)
	return r
}
