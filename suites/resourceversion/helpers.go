package resourceversion

import (
	"fmt"
	"net/http"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/apiconform/apiconform/spec/catalog"
	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "resourceversion"

// item is one object as a list or get showed it.
type item struct {
	Name string
	RV   string
	Data string // data.k
}

func (i item) String() string { return fmt.Sprintf("%s@%s(%s)", i.Name, i.RV, i.Data) }

// items reads a list response's items.
func items(r *fw.Response) []item {
	var out []item
	for _, it := range r.JSON("items").Array() {
		out = append(out, item{Name: it.Get("metadata.name").String(), RV: it.Get("metadata.resourceVersion").String(), Data: it.Get("data.k").String()})
	}
	return out
}

// snapshot is the state of the namespace's configmaps at one resourceVersion, in key order.
type snapshot []item

func (s snapshot) prefixOf(n int) snapshot {
	if n > len(s) {
		n = len(s)
	}
	return s[:n]
}

// createCM creates a configmap with data.k = value and returns it as an item.
func createCM(f *fw.Framework, name, value string) item {
	r := f.CreateConfigMap(name, map[string]string{"k": value})
	return item{Name: name, RV: r.Str("metadata.resourceVersion"), Data: value}
}

// setCM changes data.k with a merge patch and returns the new state.
func setCM(f *fw.Framework, name, value string) item {
	r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, map[string]any{"data": map[string]string{"k": value}})
	ExpectWithOffset(1, r.Code).To(Equal(http.StatusOK), "patch %s: %s", name, r)
	return item{Name: name, RV: r.Str("metadata.resourceVersion"), Data: value}
}

// deleteCM deletes a configmap and expects success.
func deleteCM(f *fw.Framework, name string) {
	r := f.DeleteConfigMap(name)
	ExpectWithOffset(1, r.Code).To(BeElementOf(http.StatusOK, http.StatusAccepted), "delete %s: %s", name, r)
}

// list lists the namespace's configmaps with the given options (any status).
func list(f *fw.Framework, opts ...fw.Option) *fw.Response {
	return f.Get(f.ConfigMapsPath(), opts...)
}

// sorted returns the items ordered by name (the key order servers page in).
func sorted(in []item) snapshot {
	out := append(snapshot(nil), in...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// expectStatusCell asserts a rejected request answers exactly what the catalogue recorded.
func expectStatusCell(r *fw.Response, want catalog.Outcome) {
	fw.ExpectStatus(r, want.Code, want.Reason)
	ExpectWithOffset(1, r.Str("message")).To(Equal(want.Message), "%s", r)
	if want.Cause != nil {
		c := r.JSON("details.causes.0")
		ExpectWithOffset(1, c.Get("reason").String()).To(Equal(want.Cause.Reason), "%s", r)
		ExpectWithOffset(1, c.Get("field").String()).To(Equal(want.Cause.Field), "%s", r)
		if want.Cause.Message != "" {
			ExpectWithOffset(1, c.Get("message").String()).To(Equal(want.Cause.Message), "%s", r)
		}
	}
}

// record attaches an observation to the spec's report.
func record(name, format string, args ...any) {
	AddReportEntry(name, fmt.Sprintf(format, args...))
}
