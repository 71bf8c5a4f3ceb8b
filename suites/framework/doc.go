// Package framework is the small toolkit every apiconform suite is written on.
//
// It talks raw HTTP to the target (client-go only supplies the authenticated
// transport), so specs see exact status codes, headers and bodies.
//
// Lifecycle
//
//	framework.Configure(ctx, target) // once per process, by the runner, before RunSpecs
//	framework.Caps()                 // capabilities detected by Configure
//	framework.ServerURL()            // the target's base URL
//	target.HTTPClient()              // authenticated *http.Client + base URL, for tools outside specs
//
// In a suite:
//
//	var _ = Describe("configmaps", framework.Area("conventions"), func() {
//		f := framework.New("conventions") // BeforeEach: fresh namespace; DeferCleanup: delete it
//		It("answers 404 with a Status", framework.Req("CONV-STATUS-404"), func() {
//			r := f.Get(f.ConfigMapPath(f.Name("missing")))
//			Expect(r.Code).To(Equal(404))
//			Expect(r.Str("reason")).To(Equal("NotFound"))
//		})
//	})
//
// Requests: f.Do(method, path, body, opts...) and the shorthands Get, Post,
// Put, Patch, Delete return a *Response (Code, Header, Body; JSON access with
// r.JSON(gjsonPath) / r.Str / r.Int / r.Exists; r.Warnings()). Options:
// Query(k, v), Header(k, v), ContentType(ct), Accept(a), Timeout(d). A body
// may be []byte, string (sent as is) or any other value (encoded as JSON).
// Patch takes one of JSONPatch, MergePatch, StrategicMergePatch, ApplyPatch
// (apimachinery's types.PatchType values). A transport error ends the spec
// as error, never as a conformance failure, and three requests in a row
// without an answer stop the run (Lost; outcome.go); use DefaultClient().Do
// for an error return instead.
//
// Every exchange is recorded as a result.Exchange (reports/result), redacted
// once where it is recorded (result.Exchange.Redacted, which uses
// reports/redact). When a spec fails, its exchanges are attached to its
// report as the entry named result.ExchangesEntry, with
// ReportEntryVisibilityFailureOrVerbose; the value is their JSON text
// (result.ExchangesEntryValue), which result.FromGinkgo decodes.
//
// Objects: f.Name(prefix) gives a unique name; f.Namespace is the spec's own
// namespace (ac-<area>-<random>). ConfigMap helpers: ConfigMap, SetMeta,
// CreateConfigMap, GetConfigMap, ListConfigMaps, DeleteConfigMap,
// ConfigMapPath, ConfigMapsPath. f.CreateCRD(CRDOptions{...}) creates a
// uniquely named CRD (group <random>.apiconform.test), waits until it is
// Established and served, and deletes it after the spec. f.Watch(path,
// opts...) opens a watch (closed after the spec; Timeout(d) bounds the
// stream, default the target's watch timeout); w.Next(timeout) returns the
// next event, ErrWatchTimeout or ErrWatchClosed.
//
// Suite kit (shared by the resourceVersion, watch and paging areas): Obj is a
// configmap state (name, resourceVersion, data.k); ObjOf and Items read it
// from responses; f.CreateObj, f.SetObj, f.PatchObj and f.DeleteObj write it
// and fail the spec on an unexpected status; Record(name, format, args...)
// attaches an observation to the spec's result, which every report shows
// (result.Observation); DescribeCatalogTable(text, tableID,
// body) declares one spec per cell of a catalogue table. PollUntil, RVInt and
// RequireSince help specs that wait, compare resourceVersions or depend on
// the target's release.
//
// Capabilities: RequireCRDs and RequireWatchList skip the spec with a
// reason when the target lacks the feature; RequireFrobbers ends it as not
// applicable (NotApplicable(reason): the requirement does not apply to this
// target, left out of the conformance percentage); Caps() has the rest
// (RefServer, the version). Compact(ctx) compacts the reference server's
// history now and returns the compacted revision (an error wrapping
// ErrNotSupported on other targets); a spec calling it is labelled
// CompactsHistory, so that it runs apart from the other workers' specs
// (historylock.go); CompactionWait() is how long a spec may
// wait for other targets to compact by themselves. A spec whose check needs
// history to be dropped is declared with f.ItAfterExpiry (expiry.go): on a
// target without the hook its history is written when the process starts
// and it runs last, so such waits overlap the other specs.
//
// Credentials: the client-go transport adds them below the recording layer,
// so they never reach a recorded exchange; Cookie/Set-Cookie and similar
// headers, bearer tokens, JWTs, private keys and token/password fields in
// bodies are replaced by [REDACTED] as well.
//
// Labels: Area(name) is the label "area:<name>"; Req(ids...) gives the
// labels "req:<id>" (the same strings as catalog.Label). Every spec must carry
// at least one Req label naming a catalogue requirement.
//
// The framework keeps per-process state (one spec runs at a time in a Ginkgo
// process); parallel Ginkgo processes are isolated by their namespaces.
package framework
