package apiserver

import (
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiconform/apiconform/refserver/registry"
)

const nameDescription = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"

// objectTable renders one object as a Table, which carries the object's
// resourceVersion, as kube-apiserver's does.
func objectTable(k *registry.Kind, obj registry.Object, includeObject string) *metav1.Table {
	rv, _ := registry.Meta(obj)["resourceVersion"].(string)
	return toTable(k, []registry.Object{obj}, rv, "", includeObject)
}

// toTable renders objects as a meta.k8s.io/v1 Table.
func toTable(k *registry.Kind, items []registry.Object, rv, cont, includeObject string) *metav1.Table {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}}
	t.ResourceVersion, t.Continue = rv, cont
	namesItself := slices.ContainsFunc(k.Columns, func(c registry.Column) bool { return c.Format == "name" })
	if !namesItself {
		t.ColumnDefinitions = []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: nameDescription}}
	}
	for _, c := range k.Columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
	}
	t.Rows = []metav1.TableRow{}
	for _, obj := range items {
		m := registry.Meta(obj)
		row := metav1.TableRow{Cells: make([]any, 0, len(t.ColumnDefinitions))}
		if !namesItself {
			row.Cells = append(row.Cells, m["name"])
		}
		row.Cells = k.AppendCells(row.Cells, obj)
		switch includeObject {
		case "None":
		case "Object":
			b, _ := json.Marshal(obj)
			row.Object = runtime.RawExtension{Raw: b}
		default:
			b, _ := json.Marshal(map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m})
			row.Object = runtime.RawExtension{Raw: b}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
