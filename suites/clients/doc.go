// Package clients is the suite area that runs real client machinery against
// the target: client-go's informers, reflectors, pager, typed and dynamic
// clients, discovery, RESTMapper and OpenAPI v3 client, and kubectl when one
// is available ($KUBECTL, else kubectl on PATH).
//
// The other areas check the wire byte by byte; this one checks that the
// libraries people build controllers and tools with end up with the right
// state. Each spec drives the library as a controller would, observes what it
// asked for (a recording ListerWatcher, the framework's exchange log) and
// compares what it holds with what the server says.
//
// History that must expire (a reflector's resourceVersion, a continue token)
// is dropped with the reference server's compaction hook; elsewhere the spec
// uses the target's own mechanisms within a bounded budget (a CRD update
// rebuilds kube-apiserver's watch cache of that resource; etcd compaction
// expires continue tokens) and skips with the reason when history outlives it.
package clients
