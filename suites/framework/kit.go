package framework

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/tidwall/gjson"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

// The suite kit: what the resourceVersion, watch and paging areas share to
// write configmaps, compare the states they saw and build one spec per cell
// of a documented table.

// Obj is one configmap state as a response showed it: name, resourceVersion
// and the value of data.k, the one key the kit writes.
type Obj struct {
	Name string
	RV   string
	Data string
}

func (o Obj) String() string { return fmt.Sprintf("%s@%s(%s)", o.Name, o.RV, o.Data) }

// ObjOf reads the state of an object document (a response body, a list item
// or a watch event's object).
func ObjOf(doc gjson.Result) Obj {
	return Obj{Name: doc.Get("metadata.name").String(), RV: doc.Get("metadata.resourceVersion").String(),
		Data: doc.Get("data.k").String()}
}

// Items reads the states of a list response's items, in the order served.
func Items(r *Response) []Obj {
	var out []Obj
	for _, it := range r.JSON("items").Array() {
		out = append(out, ObjOf(it))
	}
	return out
}

// CreateObj creates configmap name with data.k = value and the given labels
// (none when nil), expects 201 Created and returns the state written.
func (f *Framework) CreateObj(name, value string, labels map[string]string) Obj {
	o := ConfigMap(name, map[string]string{"k": value})
	if labels != nil {
		SetMeta(o, "labels", labels)
	}
	r := f.Post(f.ConfigMapsPath(), o)
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusCreated), "create %s: %s", name, r)
	return Obj{Name: name, RV: r.Str("metadata.resourceVersion"), Data: value}
}

// PatchObj merge-patches configmap name, expects 200 OK and returns the
// state the answer shows.
func (f *Framework) PatchObj(name string, patch any) Obj {
	r := f.patchObj(name, patch)
	return Obj{Name: name, RV: r.Str("metadata.resourceVersion"), Data: r.Str("data.k")}
}

// SetObj changes data.k of configmap name to value and returns the new state.
func (f *Framework) SetObj(name, value string) Obj {
	r := f.patchObj(name, map[string]any{"data": map[string]string{"k": value}})
	return Obj{Name: name, RV: r.Str("metadata.resourceVersion"), Data: value}
}

func (f *Framework) patchObj(name string, patch any) *Response {
	r := f.Patch(f.ConfigMapPath(name), MergePatch, patch)
	gomega.ExpectWithOffset(2, r.Code).To(gomega.Equal(http.StatusOK), "patch %s: %s", name, r)
	return r
}

// DeleteObj deletes configmap name and expects 200 OK or 202 Accepted.
func (f *Framework) DeleteObj(name string) {
	r := f.DeleteConfigMap(name)
	gomega.ExpectWithOffset(1, r.Code).To(gomega.BeElementOf(http.StatusOK, http.StatusAccepted), "delete %s: %s", name, r)
}

// CreateHeld creates configmap name with data and finalizers, expects 201
// Created, and releases the finalizers after the spec (even a failed one) so
// the namespace can go. Nothing on any server acts on apiconform.test
// finalizers: the object stays until the spec or the cleanup removes them.
func (f *Framework) CreateHeld(name string, data map[string]string, finalizers ...string) *Response {
	r := f.Post(f.ConfigMapsPath(), SetMeta(ConfigMap(name, data), "finalizers", finalizers))
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(http.StatusCreated), "create %s: %s", name, r)
	ginkgo.DeferCleanup(func() { f.Patch(f.ConfigMapPath(name), MergePatch, `{"metadata":{"finalizers":null}}`) })
	return r
}

// Record attaches an observation (what an allowed-but-variable behaviour
// turned out to be) to the spec's report: Ginkgo's output shows it, and the
// result carries it (result.Observation) into every report.
func Record(name, format string, args ...any) {
	ginkgo.AddReportEntry(result.ObservationEntryName(name), fmt.Sprintf(format, args...))
}

// DescribeCatalogTable declares one spec per cell of the catalogue's
// documented table id, named "<row headers>, <column header>: <cell text>"
// and labelled with the cell's requirement; body checks one cell.
func DescribeCatalogTable(text, id string, body func(catalog.Cell)) bool {
	t, ok := catalog.TableByID(id)
	if !ok {
		panic("catalog has no table " + id)
	}
	args := []any{body}
	for _, row := range t.Rows {
		for i, cell := range row.Cells {
			where := append(append([]string{}, row.Headers...), t.Headers[len(row.Headers)+i])
			desc := fmt.Sprintf("%s: %s", strings.Join(where, ", "), cell.Text)
			args = append(args, ginkgo.Entry(desc, ginkgo.Label(catalog.Label(cell.Requirement)), cell))
		}
	}
	return ginkgo.DescribeTable(text, args...)
}
