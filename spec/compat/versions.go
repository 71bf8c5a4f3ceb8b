package compat

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

// servedVersion is one served version of a resource (CRD) or group (built-in API).
type servedVersion struct {
	key, group, version, kind string
	storage, deprecated       bool
}

// servedVersions lists what a document serves: per CRD kind and version for CRD
// manifests, per group/version (from /apis/G/V paths) otherwise.
func servedVersions(d *openapi.Document) map[string]servedVersion {
	out := map[string]servedVersion{}
	if d.Format == openapi.FormatCRD {
		for res, vs := range d.CRDVersions {
			group, kind, _ := strings.Cut(res, "/")
			for _, v := range vs {
				if v.Served {
					key := openapi.CRDDefinitionName(group, v.Version, kind)
					out[key] = servedVersion{key: key, group: group, version: v.Version, kind: kind, storage: v.Storage, deprecated: v.Deprecated}
				}
			}
		}
		return out
	}
	for key, g := range d.GroupVersions {
		if g.Served {
			out[key] = servedVersion{key: key, group: g.Group, version: g.Version, deprecated: g.Deprecated}
		}
	}
	return out
}

// compareVersions: version removed without deprecation, and a new version made
// preferred or storage in the release that adds it.
func (c *comparer) compareVersions() {
	oldV, newV := servedVersions(c.old), servedVersions(c.new)
	for _, key := range sortedKeys(oldV) {
		ov := oldV[key]
		if _, ok := newV[key]; ok {
			continue
		}
		c.removedGVs[key] = true
		l := loc{def: key}
		before := len(c.findings)
		c.add(l, VersionRemoved, fmt.Sprintf("version %s is no longer served", key))
		if len(c.findings) > before {
			f := &c.findings[len(c.findings)-1]
			switch {
			case ov.deprecated:
				f.Level = openapi.Info
				f.Note = "the old document marked the version deprecated"
			case strings.Contains(ov.version, "alpha"):
				f.Level = openapi.Warning
				f.Note = "alpha API version: compatibility is not strictly required"
			case c.old.Format != openapi.FormatCRD && c.replacement(ov.group, ov.version, c.old.GroupVersions[key].Kinds) != "":
				f.Level = openapi.Warning
				f.Note = "its kinds stay served by " + c.replacement(ov.group, ov.version, c.old.GroupVersions[key].Kinds) +
					" in both releases: removal after the deprecation period is allowed (OpenAPI does not show the deprecation; check it was announced)"
			default:
				f.Note = "no deprecation of the version is visible in the old document"
			}
		}
	}
	if c.new.Format != openapi.FormatCRD {
		return // storage and preferred versions are visible in CRD manifests only
	}
	for _, key := range sortedKeys(newV) {
		nv := newV[key]
		if _, ok := oldV[key]; ok {
			continue
		}
		res := nv.group + "/" + nv.kind
		if len(c.old.CRDVersions[res]) == 0 {
			continue // a new resource: its first version is preferred and storage by necessity
		}
		if nv.storage {
			c.add(loc{def: key}, NewVersionStorage, fmt.Sprintf("new version %s of %s is the storage version in the release that adds it", nv.version, res))
		}
		if c.new.PreferredCRDVersion(res) == nv.version {
			c.add(loc{def: key}, NewVersionPreferred, fmt.Sprintf("new version %s of %s is the preferred (highest-priority served) version in the release that adds it", nv.version, res))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxDefaultWalk bounds the field expansion of one kind (refs are followed here).
const maxDefaultWalk = 200_000

// fieldDefaults expands a kind's schema into field paths ("spec.replicas",
// "spec.ports[].protocol") and whether each has a default. Refs are followed with
// an on-stack set, so recursive schemas stop at their first repetition.
func fieldDefaults(root *openapi3.SchemaRef) map[string]bool {
	out := map[string]bool{}
	onStack := map[*openapi3.Schema]bool{}
	budget := maxDefaultWalk
	var walk func(path string, s *openapi3.SchemaRef)
	walk = func(path string, s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil || budget <= 0 {
			return
		}
		budget--
		v := s.Value
		if path != "" {
			out[path] = out[path] || v.Default != nil || (s.Ref == "" && len(v.AllOf) == 1 && v.AllOf[0].Value != nil && v.AllOf[0].Value.Default != nil)
		}
		if onStack[v] {
			return
		}
		onStack[v] = true
		defer delete(onStack, v)
		if openapi.EffectiveRef(s) != "" && s.Ref == "" {
			v = v.AllOf[0].Value
			if v == nil || onStack[v] {
				return
			}
			onStack[v] = true
			defer delete(onStack, v)
		}
		for name, p := range v.Properties {
			child := name
			if path != "" {
				child = path + "." + name
			}
			walk(child, p)
		}
		walk(path+"[]", v.Items)
		walk(path+"{}", v.AdditionalProperties.Schema)
	}
	walk("", root)
	return out
}

// defaultGaps lists, per version definition of each multi-version kind, the fields
// that lack a default another version of the kind has.
func defaultGaps(d *openapi.Document) map[string]string {
	byKind := map[string][]string{} // group/Kind -> definitions
	for _, n := range d.Names {
		for _, k := range d.Kinds[n] {
			if len(d.Kinds[n]) == 1 {
				key := k.Group + "/" + k.Kind
				byKind[key] = append(byKind[key], n)
			}
		}
	}
	gaps := map[string]string{} // "def\x00field" -> versions that default it
	for _, defs := range byKind {
		if len(defs) < 2 {
			continue
		}
		fields := map[string]map[string]bool{}
		for _, def := range defs {
			fields[def] = fieldDefaults(d.Schemas[def])
		}
		for _, def := range defs {
			for field, hasDefault := range fields[def] {
				if hasDefault {
					continue
				}
				var with []string
				for _, other := range defs {
					if other != def && fields[other][field] {
						with = append(with, d.Kinds[other][0].Version)
					}
				}
				if len(with) > 0 {
					sort.Strings(with)
					gaps[def+"\x00"+field] = strings.Join(with, ", ")
				}
			}
		}
	}
	return gaps
}

// compareDefaultsAcrossVersions: a field defaulted in one version of a kind must be
// defaulted in all of them (default-not-in-all-versions); only gaps new in the new document are reported.
func (c *comparer) compareDefaultsAcrossVersions() {
	oldGaps, newGaps := defaultGaps(c.old), defaultGaps(c.new)
	for _, key := range sortedKeys(newGaps) {
		if _, ok := oldGaps[key]; ok {
			continue
		}
		def, field, _ := strings.Cut(key, "\x00")
		c.add(loc{def: def, ptr: fieldPointer(field)}, DefaultNotAllVersions,
			fmt.Sprintf("field %s has a default in version(s) %s but none in %s", field, newGaps[key], c.new.Kinds[def][0].Version))
	}
}

// fieldPointer turns "spec.ports[].protocol" into a JSON pointer inside the kind's schema.
func fieldPointer(field string) string {
	var b strings.Builder
	for _, part := range strings.Split(field, ".") {
		suffix := ""
		for strings.HasSuffix(part, "[]") || strings.HasSuffix(part, "{}") {
			if strings.HasSuffix(part, "[]") {
				suffix = "/items" + suffix
			} else {
				suffix = "/additionalProperties" + suffix
			}
			part = part[:len(part)-2]
		}
		b.WriteString("/properties/" + openapi.EscapePointer(part) + suffix)
	}
	return b.String()
}

// replacement names the versions of group that serve every one of kinds, other than
// version, in both documents ("" when some kind has none): the migration path the
// deprecation policy requires before a version goes.
func (c *comparer) replacement(group, version string, kinds []string) string {
	if len(kinds) == 0 {
		return ""
	}
	found := map[string]bool{}
	for _, kind := range kinds {
		ok := false
		for _, gv := range c.old.KindVersions(kind) {
			g, v := splitGV(gv)
			// An alpha version is no migration path for a beta or GA one.
			if g != group || v == version || strings.Contains(v, "alpha") && !strings.Contains(version, "alpha") ||
				!slices.Contains(c.new.KindVersions(kind), gv) {
				continue
			}
			ok = true
			found[gv] = true
		}
		if !ok {
			return ""
		}
	}
	return strings.Join(sortedKeys(found), ", ")
}

func splitGV(gv string) (group, version string) {
	if i := strings.LastIndex(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}
