package registry

import (
	"k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The name rules every write checks (object names, label keys and values,
// annotation keys, ConfigMap and Secret keys) written out by hand: as
// apimachinery's regular expressions they cost more than the rest of the
// metadata's validation. A name these accept is one apimachinery accepts
// (TestNameRules holds them to that, both ways); any other goes to
// apimachinery, which stays the one source of the messages.

func alnum(c byte) bool      { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// qualifiedNamePart: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63.
func qualifiedNamePart(s string) bool {
	if len(s) == 0 || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// labelValue is IsValidLabelValue's rule: empty, or a qualified name part.
func labelValue(s string) bool { return s == "" || qualifiedNamePart(s) }

// dns1123Subdomain is IsDNS1123Subdomain's rule: at most 253, labels of
// [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by dots. fold takes A-Z as a-z.
func dns1123Subdomain(s string, fold bool) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	lower := func(c byte) byte {
		if fold && 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			continue
		}
		if i == start || !lowerAlnum(lower(s[start])) || !lowerAlnum(lower(s[i-1])) {
			return false
		}
		for j := start + 1; j < i-1; j++ {
			if c := lower(s[j]); !lowerAlnum(c) && c != '-' {
				return false
			}
		}
		start = i + 1
	}
	return true
}

// qualifiedName is IsQualifiedName's rule, on s lowercased when fold (as
// annotation keys are checked): a name part, after an optional DNS
// subdomain prefix and "/".
func qualifiedName(s string, fold bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return dns1123Subdomain(s[:i], fold) && qualifiedNamePart(s[i+1:])
		}
	}
	return qualifiedNamePart(s)
}

// configMapKey is IsConfigMapKey's rule: [-._a-zA-Z0-9]+, at most 253,
// neither "." nor starting with "..".
func configMapKey(s string) bool {
	if len(s) == 0 || len(s) > 253 || s == "." || len(s) >= 2 && s[0] == '.' && s[1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// configMapKeyErrors is IsConfigMapKey, answered by hand where it finds
// nothing.
func configMapKeyErrors(key string) []string {
	if configMapKey(key) {
		return nil
	}
	return utilvalidation.IsConfigMapKey(key)
}

// validateLabels is stringMap's errors and metavalidation.ValidateLabels'
// for metadata.labels as decoded, answered by hand, with no map of strings
// built, where they find nothing.
func validateLabels(lm map[string]any, p *field.Path) field.ErrorList {
	for k, v := range lm {
		if s, ok := v.(string); !ok || !qualifiedName(k, false) || !labelValue(s) {
			ls, errs := stringMap(lm, p)
			return append(errs, metavalidation.ValidateLabels(ls, p)...)
		}
	}
	return nil
}

// validateAnnotations is validateLabels for metadata.annotations, with
// validation.ValidateAnnotations (key rules and the total size).
func validateAnnotations(am map[string]any, p *field.Path) field.ErrorList {
	size := 0
	for k, v := range am {
		s, ok := v.(string)
		if !ok || !qualifiedName(k, true) {
			return annotationErrors(am, p)
		}
		size += len(k) + len(s)
	}
	if size > validation.TotalAnnotationSizeLimitB {
		return annotationErrors(am, p)
	}
	return nil
}

func annotationErrors(am map[string]any, p *field.Path) field.ErrorList {
	as, errs := stringMap(am, p)
	return append(errs, validation.ValidateAnnotations(as, p)...)
}
