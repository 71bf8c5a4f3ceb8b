package registry

import (
	"context"
	"sync"
	"time"

	"github.com/apiconform/apiconform/refserver/storage"
)

// Objects of a kind with a TTL (events: kube-apiserver's --event-ttl) are
// removed that long after their last write. kube-apiserver gives each write
// of one a fresh etcd lease; when the lease runs out etcd deletes the key,
// with no delete request (no finalizers, no preconditions), and watchers see
// DELETED. Here the registry notes each such write's expiry and a sweeper
// deletes what has run out, at the revision noted: an object written again
// since has a later expiry and is left alone.

// expiries are the pending expiries, by store key.
type expiries struct {
	mu sync.Mutex
	at map[string]expiry
}

type expiry struct {
	rev  int64     // the write that set it
	when time.Time // when that write's object goes
}

// renew notes that the write at rev of key expires at when.
func (e *expiries) renew(key string, rev int64, when time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.at == nil {
		e.at = map[string]expiry{}
	}
	e.at[key] = expiry{rev: rev, when: when}
}

// forget drops key's expiry (the object was deleted), or only the one of
// the write at rev when rev is not 0.
func (e *expiries) forget(key string, rev int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.at[key]; ok && (rev == 0 || x.rev == rev) {
		delete(e.at, key)
	}
}

// due lists the keys, and their writes' revisions, expired at now.
func (e *expiries) due(now time.Time) map[string]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int64{}
	for key, x := range e.at {
		if !x.when.After(now) {
			out[key] = x.rev
		}
	}
	return out
}

// ttl is how long k's objects live after their last write (0: until deleted).
func (k *Kind) ttl() time.Duration {
	if k.StoredAs != nil {
		return k.StoredAs.TTL
	}
	return k.TTL
}

// noteExpiry records, after commit stored or removed c, when its object goes.
func (r *Registry) noteExpiry(k *Kind, c *change, rev int64) {
	ttl := k.ttl()
	switch {
	case ttl <= 0:
	case c.op == opRemove:
		r.expiries.forget(c.key, 0)
	default:
		r.expiries.renew(c.key, rev, r.clock().Add(ttl))
	}
}

// startExpiry gives the objects already stored of every kind with a TTL a
// full TTL from now (a restart does not know their writes' times), and
// starts the sweeper when there is such a kind.
func (r *Registry) startExpiry(ctx context.Context) error {
	shortest := time.Duration(0)
	for _, k := range r.Kinds() {
		ttl := k.TTL
		if ttl <= 0 || k.StoredAs != nil {
			continue
		}
		if shortest == 0 || ttl < shortest {
			shortest = ttl
		}
		res, err := r.store.List(ctx, storage.ListOptions{Prefix: basePrefix(k)})
		if err != nil {
			return err
		}
		for _, kv := range res.Items {
			r.expiries.renew(kv.Key, kv.ModRevision, r.clock().Add(ttl))
		}
	}
	if shortest > 0 {
		// A sixtieth of the TTL, so an hour's objects go within a minute
		// of their time.
		every := min(max(shortest/60, 50*time.Millisecond), time.Minute)
		r.background(func(ctx context.Context) { r.sweep(ctx, every) })
	}
	return nil
}

// sweep deletes expired objects every interval until ctx ends.
func (r *Registry) sweep(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for key, rev := range r.expiries.due(r.clock()) {
			// Refused when the object was written or deleted since: a
			// write renewed its expiry, a delete forgot it.
			_, _, _ = r.store.Delete(ctx, key, rev)
			r.expiries.forget(key, rev)
		}
	}
}
