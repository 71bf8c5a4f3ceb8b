package storage_test

import (
	"context"
	"fmt"

	"github.com/apiconform/apiconform/refserver/storage"
)

func Example() {
	ctx := context.Background()
	s := storage.NewMemory(storage.Options{})
	defer s.Close()

	rev, _ := s.Create(ctx, "/pods/a", []byte("v1"))
	s.Update(ctx, "/pods/a", []byte("v2"), rev)
	s.Create(ctx, "/pods/b", []byte("v1"))

	old, _ := s.Get(ctx, "/pods/a", 1) // the key as of revision 1
	fmt.Printf("at 1: %s=%s (mod %d)\n", old.Key, old.Value, old.ModRevision)

	page, _ := s.List(ctx, storage.ListOptions{Prefix: "/pods/", Limit: 1})
	fmt.Printf("page: %d item, more=%v, remaining=%d, at revision %d\n",
		len(page.Items), page.More, page.Remaining, page.Revision)

	w, _ := s.Watch(ctx, "/pods/", 1, nil) // replay everything after revision 1
	defer w.Stop()
	for range 2 {
		ev := <-w.Events()
		fmt.Printf("event %s %s=%s at %d\n", ev.Type, ev.Key, ev.Value, ev.Revision)
	}

	s.Compact(2)
	_, err := s.Get(ctx, "/pods/a", 1)
	fmt.Println(err)
	// Output:
	// at 1: /pods/a=v1 (mod 1)
	// page: 1 item, more=true, remaining=1, at revision 3
	// event PUT /pods/a=v2 at 2
	// event PUT /pods/b=v1 at 3
	// revision 1, compacted 2: storage: revision has been compacted
}
