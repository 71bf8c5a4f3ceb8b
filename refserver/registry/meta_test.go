package registry

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Selector.Matches reads labels and fields in place; it must select what
// matching the built labels.Set and FieldSet selects.
func TestSelectorMatchesAsSets(t *testing.T) {
	k := &Kind{Namespaced: true, Fields: map[string]func(Object) string{
		"type": func(o Object) string { return str(o["type"]) },
	}}
	cluster := &Kind{}
	objs := []Object{
		{"metadata": map[string]any{"name": "a", "namespace": "n", "labels": map[string]any{"x": "1", "y": ""}}, "type": "t"},
		{"metadata": map[string]any{"name": "b", "labels": map[string]any{"x": 2}}},
		{"metadata": map[string]any{"name": "c"}},
		{"metadata": "not a map"},
		{},
	}
	for _, ls := range []string{"", "x=1", "x!=1", "!x", "y", "x in (1,2)", "x,y"} {
		for _, fs := range []string{"", "metadata.name=a", "metadata.namespace=n", "metadata.namespace!=n", "type=t", "metadata.name!=a,type!=t"} {
			for _, kind := range []*Kind{k, cluster} {
				lsel, err := labels.Parse(ls)
				if err != nil {
					t.Fatal(err)
				}
				fsel, err := fields.ParseSelector(fs)
				if err != nil {
					t.Fatal(err)
				}
				sel := Selector{Labels: lsel, Fields: fsel}
				for _, o := range objs {
					c := deepCopy(o)
					set := labels.Set{}
					if lm, ok := meta(c)["labels"].(map[string]any); ok {
						for key, v := range lm {
							set[key] = str(v)
						}
					}
					want := lsel.Matches(set) && fsel.Matches(FieldSet(kind, c))
					if got := sel.Matches(kind, c); got != want {
						t.Errorf("labels %q fields %q on %v (namespaced %v): %v, sets give %v", ls, fs, o, kind.Namespaced, got, want)
					}
				}
			}
		}
	}
}
