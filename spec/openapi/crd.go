package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
)

// crdManifest is the part of an apiextensions.k8s.io/v1 CustomResourceDefinition the checkers read.
type crdManifest struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind     string `json:"kind"`
			ListKind string `json:"listKind"`
		} `json:"names"`
		Conversion *struct {
			Strategy string `json:"strategy"`
		} `json:"conversion"`
		Versions []struct {
			Name       string `json:"name"`
			Served     bool   `json:"served"`
			Storage    bool   `json:"storage"`
			Deprecated bool   `json:"deprecated"`
			Schema     *struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
			Subresources map[string]json.RawMessage `json:"subresources"`
			Columns      []struct {
				Name     string `json:"name"`
				JSONPath string `json:"jsonPath"`
			} `json:"additionalPrinterColumns"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		StoredVersions []string `json:"storedVersions"`
	} `json:"status"`
}

// CRDDefinitionName names the schema of one CRD version: "group/version/Kind".
func CRDDefinitionName(group, version, kind string) string {
	return group + "/" + version + "/" + kind
}

// loadCRDs reads CRD manifests (JSON documents, possibly Lists) into a Document whose
// definitions are each served version's openAPIV3Schema. Such schemas are reachable
// from no path, and are compared all the same.
func loadCRDs(parts [][]byte, source string) (*Document, error) {
	d := newDocument(source, FormatCRD)
	var add func(raw []byte, where string) error
	add = func(raw []byte, where string) error {
		var m crdManifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: %s: %w", source, where, err)
		}
		switch m.Kind {
		case "List", "CustomResourceDefinitionList":
			for i, item := range m.Items {
				if err := add(item, fmt.Sprintf("%s items[%d]", where, i)); err != nil {
					return err
				}
			}
			return nil
		case "CustomResourceDefinition":
		default:
			// Other objects in a manifest bundle (Namespaces, RBAC) are not API descriptions.
			return nil
		}
		if m.Spec.Group == "" || m.Spec.Names.Kind == "" || len(m.Spec.Versions) == 0 {
			return fmt.Errorf("%s: %s: CustomResourceDefinition %q lacks spec.group, spec.names.kind or spec.versions", source, where, m.Metadata.Name)
		}
		rk := m.Spec.Group + "/" + m.Spec.Names.Kind
		info := CRDInfo{Name: m.Metadata.Name, Conversion: "None", StoredVersions: m.Status.StoredVersions}
		if m.Spec.Conversion != nil && m.Spec.Conversion.Strategy != "" {
			info.Conversion = m.Spec.Conversion.Strategy
		}
		d.CRDs[rk] = info
		for _, v := range m.Spec.Versions {
			if v.Name == "" {
				return fmt.Errorf("%s: CustomResourceDefinition %q: a version has no name", source, m.Metadata.Name)
			}
			key := m.Spec.Group + "/" + v.Name
			cv := CRDVersion{Version: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated}
			for name := range v.Subresources {
				cv.Subresources = append(cv.Subresources, name)
			}
			sort.Strings(cv.Subresources)
			for _, c := range v.Columns {
				cv.PrinterColumns = append(cv.PrinterColumns, PrinterColumn{Name: c.Name, JSONPath: c.JSONPath})
			}
			d.CRDVersions[rk] = append(d.CRDVersions[rk], cv)
			g := d.groupVersion(key)
			g.Served = g.Served || v.Served
			g.Storage = g.Storage || v.Storage
			g.Deprecated = v.Deprecated
			g.allOpsDeprecated = v.Deprecated
			if !slices.Contains(g.Kinds, m.Spec.Names.Kind) {
				g.Kinds = append(g.Kinds, m.Spec.Names.Kind)
			}
			if v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 {
				continue
			}
			var s openapi3.Schema
			if err := json.Unmarshal(v.Schema.OpenAPIV3Schema, &s); err != nil {
				return fmt.Errorf("%s: CustomResourceDefinition %q version %s: openAPIV3Schema: %w", source, m.Metadata.Name, v.Name, err)
			}
			name := CRDDefinitionName(m.Spec.Group, v.Name, m.Spec.Names.Kind)
			d.Schemas[name] = &openapi3.SchemaRef{Value: &s}
			d.Kinds[name] = []GVK{{Group: m.Spec.Group, Version: v.Name, Kind: m.Spec.Names.Kind}}
		}
		return nil
	}
	for i, p := range parts {
		if err := add(p, fmt.Sprintf("document %d", i+1)); err != nil {
			return nil, err
		}
	}
	if len(d.GroupVersions) == 0 {
		return nil, fmt.Errorf("%s: %w", source, errNoCRD)
	}
	d.finish()
	return d, nil
}

// CRDVersion is one entry of a CRD's spec.versions.
type CRDVersion struct {
	Version                     string
	Served, Storage, Deprecated bool
	// Subresources are the names under subresources ("scale", "status"), sorted.
	Subresources   []string
	PrinterColumns []PrinterColumn
}

// PrinterColumn is one additionalPrinterColumns entry.
type PrinterColumn struct{ Name, JSONPath string }

// CRDInfo is what a CRD says about the resource as a whole.
type CRDInfo struct {
	Name string
	// Conversion is spec.conversion.strategy ("None" when unset).
	Conversion string
	// StoredVersions is status.storedVersions: versions objects may still be stored in
	// (known when the manifest came from a server).
	StoredVersions []string
}

// PreferredCRDVersion returns the version of resource ("group/Kind") a client gets by
// default: the highest-priority served version, the order kube-apiserver sorts CRD versions in.
func (d *Document) PreferredCRDVersion(resource string) string {
	var vs []string
	for _, v := range d.CRDVersions[resource] {
		if v.Served {
			vs = append(vs, v.Version)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	sort.Slice(vs, func(i, j int) bool { return VersionLess(vs[i], vs[j]) })
	return vs[0]
}
