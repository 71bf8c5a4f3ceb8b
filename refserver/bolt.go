package refserver

import (
	"path/filepath"

	"github.com/apiconform/apiconform/refserver/storage"
)

// openBolt opens the file-backed store in dir.
func openBolt(dir string, opts storage.Options) (storage.Store, error) {
	return storage.OpenBolt(filepath.Join(dir, "refserver.db"), opts)
}
