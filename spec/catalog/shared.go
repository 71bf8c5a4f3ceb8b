package catalog

import (
	"os"
	"path/filepath"
)

// SharedDir is the shared tree that holds the stored documents (docs/) and
// real Kubernetes OpenAPI documents (testdata/openapi/): $APICONFORM_SHARED
// when set, else the first "shared" directory with the documents found
// beside the working directory or one of its parents; "" when there is none.
// Tests that read it skip, saying so, when it is "".
func SharedDir() string {
	if d := os.Getenv("APICONFORM_SHARED"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared")
		if _, err := os.Stat(filepath.Join(cand, "docs", KnownDocs[0])); err == nil {
			return cand
		}
	}
	return ""
}
