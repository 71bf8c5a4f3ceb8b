package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadBytes: any input either loads or gives an error; nothing panics or hangs.
func FuzzLoadBytes(f *testing.F) {
	for _, pattern := range []string{"../compat/testdata/*", "../lint/testdata/*"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`[1]`))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{"A":{"$ref":"#/definitions/B"}}}`))
	f.Add([]byte("kind: CustomResourceDefinition\nspec: {group: g, names: {kind: K}, versions: [{name: v1, served: true, storage: true, subresources: {status: {}}}]}\nstatus: {storedVersions: [v1]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := LoadBytes(data, "fuzz")
		if err == nil && d == nil {
			t.Fatal("no document and no error")
		}
		if err == nil {
			for _, n := range d.Names {
				d.ReachedBy(n)
			}
		}
	})
}
