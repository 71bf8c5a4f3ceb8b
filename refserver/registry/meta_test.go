package registry

import (
	"fmt"
	"strings"
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

// formatUID writes what fmt's %x of the UUID's groups writes.
func TestFormatUID(t *testing.T) {
	for _, b := range [][16]byte{{}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}} {
		want := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		if got := formatUID(b); got != want {
			t.Errorf("formatUID %s, want %s", got, want)
		}
	}
	if u := newUID(); len(u) != 36 || u[14] != '4' || !strings.ContainsAny(u[19:20], "89ab") {
		t.Errorf("newUID %s is not a version 4 UUID", u)
	}
}
