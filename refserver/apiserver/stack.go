package apiserver

import "net/http"

// net/http serves each request on a new goroutine whose stack starts small
// (2 KiB, or the average the runtime last measured, which idle goroutines
// keep low). A write's handler runs deep (structured-merge-diff's walks
// recurse per field), so its stack grew several times per request, each
// growth copying every frame and adjusting its pointers: 7–12% of the
// server's CPU under `apiconform bench` (runtime.copystack). One growth at
// the handler's entry, where the stack holds a few frames, takes it
// straight to twice writeStackPad.

// writeStackPad is the frame that grows the stack: the runtime doubles
// the stack until the frame fits, so an 8 KiB frame gives 16 KiB, the
// largest stack the runtime keeps in per-processor caches. The writes of
// configmaps, secrets and namespaces fit in it (TestWritesFitTheGrownStack);
// deeper ones (a conversion, a CRD, a custom resource checked against its
// schema) grow once more. It was 32 KiB, for 64 KiB stacks, which come from
// the heap under its lock and go back to it when the goroutine ends: the
// server spent about 5% more CPU per configmap write (the median difference
// of ten alternated pairs), a custom resource's create the same.
const writeStackPad = 8 << 10 << raceShift

// growStack makes the goroutine's stack at least twice writeStackPad. The
// frame holds the pad whether or not the branch declaring it runs, and the
// pad is cleared only if it does, which it never does (i >= 0): clearing
// it, on a new stack's untouched pages, cost about what the copies did.
//
//go:noinline
func growStack(i int) byte {
	if i < 0 {
		var pad [writeStackPad]byte
		pad[-i%writeStackPad] = byte(i)
		return pad[(1-i)%writeStackPad]
	}
	return 0
}

// deepRequest reports whether r's handling runs deep enough to pay for
// growing the stack once up front: the writes (reads stay shallow).
func deepRequest(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
