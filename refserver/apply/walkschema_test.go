package apply

import (
	"fmt"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
)

// answers is what the walks ask of the type at the end of a path of keys:
// "no field" where a key on the way is neither declared nor allowed as an
// element, else whether it is a map the walks descend into, whether the last
// key was declared, and which scalar it is ("-" for none).
func answers(mapOK, declared bool, scalar *schema.Scalar) string {
	s := "-"
	if scalar != nil {
		s = string(*scalar)
	}
	return fmt.Sprintf("map=%v declared=%v scalar=%s", mapOK, declared, s)
}

// viaSchema answers from structured-merge-diff's schema, as the walks did
// before they were compiled: Resolve, then FindField or the element type.
func viaSchema(s *schema.Schema, tr schema.TypeRef, path []string) string {
	declared := false
	for _, k := range path {
		a, ok := s.Resolve(tr)
		if !ok || a.Map == nil || a.Map.ElementRelationship == schema.Atomic {
			return "not a map on the way"
		}
		f, isField := a.Map.FindField(k)
		switch {
		case isField:
			tr, declared = f.Type, true
		case a.Map.ElementType != (schema.TypeRef{}):
			tr, declared = a.Map.ElementType, false
		default:
			return "no field"
		}
	}
	a, ok := s.Resolve(tr)
	if !ok {
		return answers(false, declared, nil)
	}
	return answers(a.Map != nil && a.Map.ElementRelationship != schema.Atomic, declared, a.Scalar)
}

// viaWalkType answers the same from the compiled tree.
func viaWalkType(t *walkType, path []string) string {
	declared := false
	for _, k := range path {
		if !t.mapOK {
			return "not a map on the way"
		}
		var ok bool
		if t, declared, ok = t.field(k); !ok {
			return "no field"
		}
	}
	return answers(t.mapOK, declared, t.scalar)
}

func scalarRef(s schema.Scalar) schema.TypeRef {
	return schema.TypeRef{Inlined: schema.Atom{Scalar: ptrScalar(s)}}
}

func ptrScalar(s schema.Scalar) *schema.Scalar { return &s }

func TestWalkTypeAnswersAsTheSchema(t *testing.T) {
	// A schema that refers back to itself (node.child is a node), with an
	// atomic map, a map of strings, a list, each scalar, a name given twice,
	// a reference that does not resolve, and references that override the
	// named type's element relationship (a node made atomic, the atomic map
	// made separable, a scalar given one, which does not resolve): those
	// are other types than the plain name's, each its own node.
	atomic, separable := schema.Atomic, schema.Separable
	recursive := &schema.Schema{Types: []schema.TypeDef{
		{Name: "node", Atom: schema.Atom{Map: &schema.Map{Fields: []schema.StructField{
			{Name: "name", Type: scalarRef(schema.String)},
			{Name: "count", Type: scalarRef(schema.Numeric)},
			{Name: "on", Type: scalarRef(schema.Boolean)},
			{Name: "any", Type: scalarRef(schema.Untyped)},
			{Name: "frozen", Type: schema.TypeRef{NamedType: ptr("node"), ElementRelationship: &atomic}},
			{Name: "child", Type: schema.TypeRef{NamedType: ptr("node")}},
			{Name: "loose", Type: schema.TypeRef{NamedType: ptr("pinned"), ElementRelationship: &separable}},
			{Name: "pinned", Type: schema.TypeRef{NamedType: ptr("pinned")}},
			{Name: "text", Type: schema.TypeRef{NamedType: ptr("text")}},
			{Name: "atomicText", Type: schema.TypeRef{NamedType: ptr("text"), ElementRelationship: &atomic}},
			{Name: "labels", Type: schema.TypeRef{Inlined: schema.Atom{Map: &schema.Map{ElementType: scalarRef(schema.String)}}}},
			{Name: "items", Type: schema.TypeRef{Inlined: schema.Atom{List: &schema.List{ElementType: scalarRef(schema.String)}}}},
			{Name: "twice", Type: scalarRef(schema.String)},
			{Name: "twice", Type: scalarRef(schema.Boolean)},
			{Name: "missing", Type: schema.TypeRef{NamedType: ptr("nowhere")}},
		}}}},
		{Name: "pinned", Atom: schema.Atom{Map: &schema.Map{ElementRelationship: schema.Atomic, ElementType: scalarRef(schema.String)}}},
		{Name: "text", Atom: schema.Atom{Scalar: ptrScalar(schema.String)}},
	}}
	cm := managerFor(t, "ConfigMap")
	empty, err := cm.emptyTyped()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		s      *schema.Schema
		root   schema.TypeRef
		path   []string
		answer string
	}{
		{"string", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"name"}, "map=false declared=true scalar=string"},
		{"number", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"count"}, "map=false declared=true scalar=numeric"},
		{"boolean", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"on"}, "map=false declared=true scalar=boolean"},
		{"untyped", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"any"}, "map=false declared=true scalar=untyped"},
		{"itself, three deep", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child", "child", "child", "name"}, "map=false declared=true scalar=string"},
		{"itself", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child"}, "map=true declared=true scalar=-"},
		{"atomic map", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child", "pinned"}, "map=false declared=true scalar=-"},
		{"inside an atomic map", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"pinned", "a"}, "not a map on the way"},
		{"element of a map", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"labels", "anything"}, "map=false declared=false scalar=string"},
		{"list", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"items"}, "map=false declared=true scalar=-"},
		{"a name given twice", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"twice"}, "map=false declared=true scalar=boolean"},
		{"a type that does not resolve", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"missing"}, "map=false declared=true scalar=-"},
		{"itself made atomic", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child", "frozen"}, "map=false declared=true scalar=-"},
		{"inside itself made atomic", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"frozen", "name"}, "not a map on the way"},
		{"atomic map made separable", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"loose"}, "map=true declared=true scalar=-"},
		{"inside an atomic map made separable", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child", "loose", "a"}, "map=false declared=false scalar=string"},
		{"named scalar", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"text"}, "map=false declared=true scalar=string"},
		{"named scalar given a relationship", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"atomicText"}, "map=false declared=true scalar=-"},
		{"undeclared", recursive, schema.TypeRef{NamedType: ptr("node")}, []string{"child", "bogus"}, "no field"},
		{"root that does not resolve", recursive, schema.TypeRef{NamedType: ptr("nowhere")}, nil, "map=false declared=false scalar=-"},
		{"configmap data", empty.Schema(), empty.TypeRef(), []string{"data", "key"}, "map=false declared=false scalar=string"},
		{"configmap label", empty.Schema(), empty.TypeRef(), []string{"metadata", "labels", "app"}, "map=false declared=false scalar=string"},
		{"configmap generation", empty.Schema(), empty.TypeRef(), []string{"metadata", "generation"}, "map=false declared=true scalar=numeric"},
		{"configmap immutable", empty.Schema(), empty.TypeRef(), []string{"immutable"}, "map=false declared=true scalar=boolean"},
		{"configmap managedFields", empty.Schema(), empty.TypeRef(), []string{"metadata", "managedFields"}, "map=false declared=true scalar=-"},
		{"configmap metadata", empty.Schema(), empty.TypeRef(), []string{"metadata"}, "map=true declared=true scalar=-"},
		{"configmap undeclared", empty.Schema(), empty.TypeRef(), []string{"metadata", "bogus"}, "no field"},
		{"configmap undeclared top", empty.Schema(), empty.TypeRef(), []string{"spec"}, "no field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := viaSchema(c.s, c.root, c.path)
			if want != c.answer {
				t.Fatalf("the schema answers %q; the case says %q", want, c.answer)
			}
			if got := viaWalkType(compileWalkType(c.s, c.root), c.path); got != want {
				t.Fatalf("%v: compiled %q, schema %q", c.path, got, want)
			}
		})
	}
	// A named type is one node, so a schema that refers to itself is a
	// cycle rather than an endless tree.
	node := compileWalkType(recursive, schema.TypeRef{NamedType: ptr("node")})
	if node.fields["child"] != node {
		t.Fatal("node.child is a node of its own")
	}
}

func TestCompiledStripAnswersAsTheSet(t *testing.T) {
	// stripped as it read the set before it was compiled.
	viaSet := func(s *fieldpath.Set, path []string) (member bool) {
		member = true
		for _, k := range path {
			if s == nil {
				return true
			}
			pe := fieldpath.PathElement{FieldName: &k}
			member = !s.Members.Has(pe)
			s, _ = s.Children.Get(pe)
		}
		return member
	}
	viaNode := func(s *stripNode, path []string) (member bool) {
		member = true
		for _, k := range path {
			member, s = s.stripped(k)
		}
		return member
	}
	for _, path := range [][]string{
		{"apiVersion"}, {"kind"}, {"metadata"}, {"data"}, {"metadata", "name"}, {"metadata", "uid"},
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "labels"},
		{"metadata", "labels", "name"}, {"data", "name"}, {"spec", "metadata", "name"},
	} {
		want := viaSet(stripSet, path)
		if got := viaNode(updateStrip, path); got != want {
			t.Errorf("%v: compiled says member %v, the set %v", path, got, want)
		}
	}
	if want := viaSet(stripSet, []string{"metadata", "name"}); want {
		t.Fatal("metadata.name should be stripped: the table above tests nothing")
	}
	if member, below := (*stripNode)(nil).stripped("metadata"); !member || below != nil {
		t.Fatal("a nil strip strips nothing")
	}
}
