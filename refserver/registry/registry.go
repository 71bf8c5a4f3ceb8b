package registry

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/storage"
)

// Config configures a Registry.
type Config struct {
	Store storage.Store
	// Clock is the time source for timestamps (nil = time.Now).
	Clock func() time.Time
	// RevisionWait bounds how long a read waits for a future resourceVersion
	// before answering 504 (0 = 3s).
	RevisionWait time.Duration
	// EventTTL is how long an event is kept after its last write, as
	// kube-apiserver's --event-ttl (0 = until deleted).
	EventTTL time.Duration
	Faults   faults.Set
}

// Registry serves every kind from one store. It knows no kind by itself:
// the server registers them (BuiltinKinds; CRDs register the kinds they define).
type Registry struct {
	store  *indexedStore // cfg.Store, wrapped: every write goes through the label index and namespace states
	clock  func() time.Time
	wait   time.Duration
	faults faults.Set

	events *eventCache // watch-event objects shared between watchers
	items  *itemCache  // list items and get answers encoded once per revision (itemcache.go)
	// written holds the get answers of the latest writes (WrittenJSON) in
	// a ring of its own (answerring.go): a burst of writes neither pushes
	// list items out nor grows the process by more than writtenBudget.
	written *answerRing
	labels  *labelCache // stored objects' labels, read once per revision (labelcache.go)
	// lastEvent holds the labels of the latest event the watches read:
	// every watch of a write reads them, its filter and then translate.
	lastEvent eventLabels
	index     *labelIndex // label key=value → keys, fed by every write to store (labelindex.go)
	// expiries are when the objects of kinds with a TTL go (expiry.go).
	expiries expiries
	eventTTL time.Duration
	// namespaces holds the state of namespaces, fed by every write to store
	// (namespace.go); nil without a store.
	namespaces *namespaceStates

	mu    sync.RWMutex
	kinds map[string]*Kind // key: group/resource
	// bg tracks background work a kind starts (namespace cleanup) so Close can wait.
	bg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// New builds a registry serving no kind yet.
func New(cfg Config) *Registry {
	r := &Registry{clock: cfg.Clock, wait: cfg.RevisionWait, faults: cfg.Faults, eventTTL: cfg.EventTTL, kinds: map[string]*Kind{},
		events: newEventCache(), items: newItemCache(itemCacheBudget), written: newAnswerRing(writtenBudget), labels: newLabelCache()}
	if cfg.Store != nil {
		r.index = newLabelIndex()
		r.namespaces = newNamespaceStates()
		r.store = &indexedStore{Store: cfg.Store, index: r.index, labels: r.labels, namespaces: r.namespaces}
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.wait <= 0 {
		r.wait = 3 * time.Second
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Start runs the OnStart hook of every registered kind (creating the system
// namespaces, serving the kinds of the CRDs found in the store after a restart).
func (r *Registry) Start(ctx context.Context) error {
	for _, k := range r.Kinds() {
		if k.OnStart == nil {
			continue
		}
		if err := k.OnStart(ctx); err != nil {
			return err
		}
	}
	if r.store == nil {
		return nil
	}
	return r.startExpiry(ctx)
}

// Close stops background work (namespace cleanup, expiry).
func (r *Registry) Close() {
	r.cancel()
	r.bg.Wait()
}

// background runs fn until it returns; Close cancels ctx and waits for it.
func (r *Registry) background(fn func(ctx context.Context)) {
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		fn(r.ctx)
	}()
}

// Store exposes the underlying store (for admin endpoints).
func (r *Registry) Store() storage.Store {
	if r.store == nil {
		return nil // no store configured: a nil interface, not a nil *indexedStore
	}
	return r.store
}

// Register serves the kinds (replacing any with the same group/resource).
func (r *Registry) Register(kinds ...*Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range kinds {
		r.kinds[k.Group+"/"+k.Resource] = k
	}
}

// Unregister stops serving group/resource.
func (r *Registry) Unregister(group, resource string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.kinds, group+"/"+resource)
}

// Lookup finds the kind serving group/resource.
func (r *Registry) Lookup(group, resource string) *Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.kinds[group+"/"+resource]
}

// Kinds lists the served kinds sorted by group then resource.
func (r *Registry) Kinds() []*Kind {
	r.mu.RLock()
	out := make([]*Kind, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

func (r *Registry) now() string { return r.clock().UTC().Format(time.RFC3339) }
