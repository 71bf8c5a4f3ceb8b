package refserver

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/apiconform/apiconform/refserver/storage"
)

// openBolt opens the file-backed store in dir. A refused file's error says
// how to go on.
func openBolt(dir string, opts storage.Options) (storage.Store, error) {
	s, err := storage.OpenBolt(filepath.Join(dir, "refserver.db"), opts)
	if errors.Is(err, storage.ErrEmptyFile) {
		return nil, fmt.Errorf("%w; restore the file from a backup, or pass --fresh-store to start an empty store in it", err)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
