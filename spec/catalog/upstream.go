package catalog

import (
	"strings"
	"unicode"
)

// Upstream is where a stored document is published and its language.
type Upstream struct {
	URL  string // the page the stored text was taken from (or its English original)
	Lang string // BCP 47 tag of the stored text: en, zh
	// Anchors: section headings become URL fragments the GitHub/Hugo way
	// (lower case, words joined by '-'); false where the page's fragment
	// ids are not derived from the stored headings.
	Anchors bool
}

// upstreams maps each stored document (KnownDocs) to its published page.
var upstreams = map[string]Upstream{
	"000_3a1b3094088024c1.txt": {URL: "https://kubernetes.io/docs/reference/using-api/api-concepts/", Lang: "en", Anchors: true},
	"001_1514b8991cf2916c.txt": {URL: "https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md", Lang: "en", Anchors: true},
	"002_c4e072c22cec5db1.txt": {URL: "https://kubernetes.io/zh-cn/docs/reference/using-api/api-concepts/#resource-versions", Lang: "zh"},
	"003_c242e18d62eea135.txt": {URL: "https://kubernetes.io/zh-cn/docs/reference/using-api/api-concepts/#resource-versions", Lang: "zh"},
	// The stored text is a Chinese rendering of the community's api_changes.md.
	"004_e6d3ce6622f9ab07.txt": {URL: "https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api_changes.md", Lang: "zh", Anchors: true},
}

// UpstreamOf returns where doc is published (ok false for an unknown doc).
func UpstreamOf(doc string) (Upstream, bool) {
	u, ok := upstreams[doc]
	return u, ok
}

// SourceURL links a source to its upstream page, at the section when the
// page's anchors follow its headings (the English heading for a translated
// document). A source's own Ref wins. "" when the document is unknown.
func SourceURL(s Source) string {
	if s.Ref != "" {
		return s.Ref
	}
	u, ok := upstreams[s.Doc]
	if !ok {
		return ""
	}
	section := s.Section
	if u.Lang != "en" {
		section = s.SectionEn
	}
	if !u.Anchors || section == "" || strings.Contains(u.URL, "#") {
		return u.URL
	}
	return u.URL + "#" + anchor(section)
}

// anchor is a heading's fragment id: lower case, letters, digits, '-' and
// '_' kept, spaces to '-', anything else dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// IsEnglish reports whether s has no Han, Hiragana, Katakana or Hangul
// letters: text a reader of English reports can read as it is.
func IsEnglish(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return false
		}
	}
	return true
}
