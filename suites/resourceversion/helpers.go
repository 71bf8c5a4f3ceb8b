package resourceversion

import (
	"sort"

	. "github.com/onsi/gomega"

	"github.com/apiconform/apiconform/spec/catalog"
	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "resourceversion"

// snapshot is the state of the namespace's configmaps at one resourceVersion, in key order.
type snapshot []fw.Obj

func (s snapshot) prefixOf(n int) snapshot {
	if n > len(s) {
		n = len(s)
	}
	return s[:n]
}

// list lists the namespace's configmaps with the given options (any status).
func list(f *fw.Framework, opts ...fw.Option) *fw.Response {
	return f.Get(f.ConfigMapsPath(), opts...)
}

// sorted returns the items ordered by name (the key order servers page in).
func sorted(in []fw.Obj) snapshot {
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
