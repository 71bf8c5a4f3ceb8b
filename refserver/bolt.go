package refserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/apiconform/apiconform/refserver/storage"
)

// openBolt opens the file-backed store in dir. A refused file's error says
// how to go on. The store's background work (the rest of the file's check,
// and garbage collection, which the load pauses) waits for begin: the
// server calls it once it serves.
func openBolt(dir string, opts storage.Options) (_ storage.Store, begin func(), _ error) {
	s, begin, err := storage.OpenBoltDeferred(filepath.Join(dir, "refserver.db"), opts)
	if errors.Is(err, storage.ErrEmptyFile) {
		return nil, nil, fmt.Errorf("%w; restore the file from a backup, or pass --fresh-store to start an empty store in it", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return s, begin, nil
}

// WaitStoreChecked waits until the store's data file has been checked
// whole (the bbolt store serves reads before that, and its writes wait
// for it; at once for a memory store) or ctx ends. An error means the
// file was refused after all, left unchanged, and no write will succeed:
// it reads as the error New returns for a file refused at open.
func (s *Server) WaitStoreChecked(ctx context.Context) error {
	c, ok := s.store.(interface{ WaitChecked(context.Context) error })
	if !ok {
		return nil
	}
	if err := c.WaitChecked(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("refserver: open store: %w", err)
	}
	return ctx.Err()
}
