package storage

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// version is one write to a key: a value, or a tombstone for a deletion.
type version struct {
	modRev    int64
	createRev int64
	value     []byte // nil for a tombstone, and for a value the file holds
	deleted   bool
}

// keyEntry is the retained history of one key, oldest version first.
type keyEntry struct {
	key      string
	versions []version
}

// liveNow reports whether the key exists at the current revision.
func (e *keyEntry) liveNow() bool {
	return len(e.versions) > 0 && !e.versions[len(e.versions)-1].deleted
}

// at returns the version in force at revision rev, if the key existed then.
func (e *keyEntry) at(rev int64) (version, bool) {
	// Versions are sorted by modRev; find the last one at or below rev.
	lo, hi := 0, len(e.versions)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if e.versions[mid].modRev <= rev {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return version{}, false
	}
	v := e.versions[lo-1]
	return v, !v.deleted
}

// keyIndex is an ordered set of keys (a treap) whose nodes also count the
// keys that are live at the current revision in their subtree. Ordered
// iteration makes a page O(log n + page); the counts make "how many keys are
// left after this one" O(log n) instead of a scan.
type keyIndex struct {
	root *treapNode
	size int
}

type treapNode struct {
	keyEntry
	prio        uint64
	left, right *treapNode
	live        int // keys live now in this subtree, this node included
}

func liveCount(n *treapNode) int {
	if n == nil {
		return 0
	}
	return n.live
}

func selfLive(n *treapNode) int {
	if n.liveNow() {
		return 1
	}
	return 0
}

func (n *treapNode) recount() {
	n.live = liveCount(n.left) + liveCount(n.right) + selfLive(n)
}

func rotateRight(n *treapNode) *treapNode {
	l := n.left
	n.left = l.right
	l.right = n
	n.recount()
	l.recount()
	return l
}

func rotateLeft(n *treapNode) *treapNode {
	r := n.right
	n.right = r.left
	r.left = n
	n.recount()
	r.recount()
	return r
}

func (ix *keyIndex) get(key string) *treapNode {
	n := ix.root
	for n != nil {
		// One comparison per node: the keys share long prefixes.
		switch c := strings.Compare(key, n.key); {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return n
		}
	}
	return nil
}

// insert adds a key with no versions (so not live) and returns its node; it
// returns the existing node when the key is present.
func (ix *keyIndex) insert(key string) *treapNode {
	if n := ix.get(key); n != nil {
		return n
	}
	nn := &treapNode{keyEntry: keyEntry{key: key}, prio: rand.Uint64()}
	ix.root = treapInsert(ix.root, nn)
	ix.size++
	return nn
}

func treapInsert(n, nn *treapNode) *treapNode {
	if n == nil {
		return nn
	}
	if nn.key < n.key {
		n.left = treapInsert(n.left, nn)
		if n.left.prio > n.prio {
			n = rotateRight(n)
		}
	} else {
		n.right = treapInsert(n.right, nn)
		if n.right.prio > n.prio {
			n = rotateLeft(n)
		}
	}
	return n
}

// remove deletes a key; callers only remove keys that are not live, so no
// count changes.
func (ix *keyIndex) remove(key string) {
	var found bool
	ix.root, found = treapRemove(ix.root, key)
	if found {
		ix.size--
	}
}

func treapRemove(n *treapNode, key string) (*treapNode, bool) {
	if n == nil {
		return nil, false
	}
	var found bool
	switch c := strings.Compare(key, n.key); {
	case c < 0:
		n.left, found = treapRemove(n.left, key)
	case c > 0:
		n.right, found = treapRemove(n.right, key)
	default:
		switch {
		case n.left == nil:
			return n.right, true
		case n.right == nil:
			return n.left, true
		case n.left.prio > n.right.prio:
			n = rotateRight(n)
			n.right, found = treapRemove(n.right, key)
		default:
			n = rotateLeft(n)
			n.left, found = treapRemove(n.left, key)
		}
	}
	n.recount()
	return n, found
}

// addLive adjusts the live counts on the path to key after the key's own
// liveness changed by delta (+1 created, -1 deleted).
func (ix *keyIndex) addLive(key string, delta int) {
	n := ix.root
	for n != nil {
		n.live += delta
		switch c := strings.Compare(key, n.key); {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return
		}
	}
}

// liveBefore counts the keys live now that sort before key.
func (ix *keyIndex) liveBefore(key string) int {
	count := 0
	n := ix.root
	for n != nil {
		if key <= n.key {
			n = n.left
		} else {
			count += liveCount(n.left) + selfLive(n)
			n = n.right
		}
	}
	return count
}

// liveTotal counts every key live now.
func (ix *keyIndex) liveTotal() int { return liveCount(ix.root) }

// ascend calls fn for every key at or after start, in key order, until fn
// returns false.
func (ix *keyIndex) ascend(start string, fn func(*treapNode) bool) {
	var stack []*treapNode
	for n := ix.root; n != nil; {
		if n.key >= start {
			stack = append(stack, n)
			n = n.left
		} else {
			n = n.right
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(n) {
			return
		}
		for c := n.right; c != nil; c = c.left {
			stack = append(stack, c)
		}
	}
}

// visitKeys calls fn for the node of each of keys (sorted, no duplicates)
// that the index holds, in key order, until fn returns false; it returns
// false when fn did. The keys descend together: a subtree is entered only
// with the keys that can be in it, so the path they share is walked once,
// not once per key.
func (ix *keyIndex) visitKeys(keys []string, fn func(*treapNode) bool) bool {
	return visitKeysIn(ix.root, keys, fn)
}

func visitKeysIn(n *treapNode, keys []string, fn func(*treapNode) bool) bool {
	for n != nil && len(keys) > 0 {
		i, found := slices.BinarySearch(keys, n.key)
		if !visitKeysIn(n.left, keys[:i], fn) {
			return false
		}
		if found {
			if !fn(n) {
				return false
			}
			i++
		}
		n, keys = n.right, keys[i:] // the right subtree, without recursion
	}
	return true
}

// prefixEnd returns the smallest key greater than every key with the prefix,
// and false when no such key exists (empty prefix or all 0xff bytes).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
