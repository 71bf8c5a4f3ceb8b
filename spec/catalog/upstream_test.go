package catalog

import "testing"

func TestUpstream(t *testing.T) {
	for _, doc := range KnownDocs {
		if _, ok := UpstreamOf(doc); !ok {
			t.Errorf("stored document %s has no upstream URL", doc)
		}
	}
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{Source{Doc: "000_3a1b3094088024c1.txt", Section: "Semantics for get and list"}, "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list"},
		{Source{Doc: "004_e6d3ce6622f9ab07.txt", Section: "关于兼容性", SectionEn: "On compatibility"}, "https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api_changes.md#on-compatibility"},
		{Source{Doc: "004_e6d3ce6622f9ab07.txt", Section: "关于兼容性"}, "https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api_changes.md"},
		{Source{Doc: "002_c4e072c22cec5db1.txt", Section: "x", SectionEn: "y"}, "https://kubernetes.io/zh-cn/docs/reference/using-api/api-concepts/#resource-versions"},
		{Source{Doc: "000_3a1b3094088024c1.txt", Ref: "https://example.test/kep"}, "https://example.test/kep"},
		{Source{Doc: "nope"}, ""},
	} {
		if got := SourceURL(tc.src); got != tc.want {
			t.Errorf("SourceURL(%+v) = %q, want %q", tc.src, got, tc.want)
		}
	}
	if IsEnglish("关于兼容性") || !IsEnglish("Semantics for get — “Exact”") {
		t.Error("IsEnglish")
	}
}

// Every quote of a document not in English has an English rendering.
func TestQuotesHaveEnglish(t *testing.T) {
	for _, r := range All() {
		if !IsEnglish(r.Source.Quote) && r.Source.QuoteEn == "" {
			t.Errorf("%s: quote %q has no quoteEn", r.ID, r.Source.Quote)
		}
		if !IsEnglish(r.Source.Section) && r.Source.SectionEn == "" {
			t.Errorf("%s: section %q has no sectionEn", r.ID, r.Source.Section)
		}
	}
}
