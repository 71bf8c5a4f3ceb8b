package faults

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Deviations of the conventions, dry-run, field-validation and apply areas
// (status codes, metadata, patches, Tables, server-side apply).
//
// Like resources.go, a fault rewrites the request and may leave a plan (its
// own context key, so that it composes with resources.go's) that
// afterWrites runs on the buffered answer. Of the faults that plan, the
// first that applies to a request wins.

// Fault names.
const (
	ApplyAsMergePatch          = "apply-as-merge-patch"
	ApplyRequiresExisting      = "apply-requires-existing"
	UpdateManagersNotRecorded  = "update-managers-not-recorded"
	UIDFromName                = "uid-from-name"
	TimestampsGoFormat         = "timestamps-go-format"
	GenerationOnEveryWrite     = "generation-on-every-write"
	WriteAnswerOldRV           = "write-answer-old-resource-version"
	PutMerges                  = "put-merges"
	StatusWrittenThroughMain   = "status-written-through-main"
	PatchNullIgnored           = "patch-null-ignored"
	JSONPatchUnsupported       = "json-patch-unsupported"
	UnknownPatchTypeAsMerge    = "unknown-patch-type-as-merge"
	UnacceptableAnswersJSON    = "unacceptable-accept-answers-json"
	MethodNotAllowedAs404      = "method-not-allowed-as-404"
	ClientErrorsAs500          = "client-errors-as-500"
	DeleteAnswersObject        = "delete-answers-object"
	DeletionTimestampClearable = "deletion-timestamp-clearable"
	TableAnswersJSON           = "table-answers-json"
	TableNameColumnOnly        = "table-name-column-only"
	TableRowsWithoutObject     = "table-rows-without-object"
	DryRunEchoesRequest        = "dry-run-echoes-request"
	OptionValuesUnchecked      = "option-values-unchecked"
	BuiltinTypeErrors422       = "builtin-type-errors-422"
	CustomTypeErrors400        = "custom-type-errors-400"
	SentManagedFieldsIgnored   = "sent-managed-fields-ignored"
	ServerSetFieldsOwned       = "server-set-fields-owned"
	SubresourceEntriesUnmarked = "subresource-entries-unmarked"
)

var writeFaults = map[string]fault{
	ApplyAsMergePatch:          {SeamHTTP, "server-side apply is served as create-or-merge-patch (a client-side apply): no field is removed, shared or owned by an Apply manager, nothing conflicts"},
	ApplyRequiresExisting:      {SeamHTTP, "server-side apply of an object that does not exist answers 404 NotFound instead of creating it (apply served like any other patch)"},
	UpdateManagersNotRecorded:  {SeamHTTP, "managedFields record appliers only: writes other than apply leave no Update entry (a server tracking server-side apply alone)"},
	UIDFromName:                {SeamHTTP, "metadata.uid is derived from resource, namespace and name, so a deleted and recreated object gets its old uid"},
	TimestampsGoFormat:         {SeamHTTP, "creationTimestamp and deletionTimestamp are written in Go's default time format (2006-01-02 15:04:05 +0000 UTC) instead of RFC 3339"},
	GenerationOnEveryWrite:     {SeamHTTP, "metadata.generation increases on every write, metadata and status changes included"},
	WriteAnswerOldRV:           {SeamHTTP, "an update or patch is answered with the resourceVersion the object had before (the answer is built before the write gets its revision)"},
	PutMerges:                  {SeamHTTP, "PUT merges the body into the stored object (a merge patch): fields it omits are kept"},
	StatusWrittenThroughMain:   {SeamHTTP, "create and update of the main resource write status too, though the kind has a status subresource"},
	PatchNullIgnored:           {SeamHTTP, "merge and strategic merge patches skip null values instead of deleting the keys (a naive deep merge)"},
	JSONPatchUnsupported:       {SeamHTTP, "JSON Patch (application/json-patch+json) answers 415 UnsupportedMediaType (a server that speaks merge patches only)"},
	UnknownPatchTypeAsMerge:    {SeamHTTP, "a PATCH of an unknown Content-Type is applied as a JSON merge patch instead of refused with 415"},
	UnacceptableAnswersJSON:    {SeamHTTP, "an Accept type the server cannot serve is answered in JSON instead of 406 NotAcceptable"},
	MethodNotAllowedAs404:      {SeamHTTP, "a verb a URL does not support answers 404 NotFound instead of 405 MethodNotAllowed (a router matching path and method together)"},
	ClientErrorsAs500:          {SeamHTTP, "request bodies the server cannot take (not decodable, over the size limit) answer 500 InternalError instead of 400 or 413"},
	DeleteAnswersObject:        {SeamHTTP, "a DELETE that removes the object answers the object as it was instead of a Success Status"},
	DeletionTimestampClearable: {SeamHTTP, "a patch or update can unset metadata.deletionTimestamp (metadata stored as sent)"},
	TableAnswersJSON:           {SeamHTTP, "Accept application/json;as=Table is answered with the plain JSON object or list (the as= parameter ignored)"},
	TableNameColumnOnly:        {SeamHTTP, "Tables of custom resources without printer columns have the Name column only (no creation-time column)"},
	TableRowsWithoutObject:     {SeamHTTP, "Table rows carry no object, whatever includeObject says (the default is the object's metadata)"},
	DryRunEchoesRequest:        {SeamHTTP, "dryRun=All creates and updates answer the object sent, without validation, preconditions or defaulting"},
	OptionValuesUnchecked:      {SeamHTTP, "dryRun and fieldValidation values other than the documented ones are ignored (a real write, the default level) instead of refused with 422"},
	BuiltinTypeErrors422:       {SeamHTTP, "a value of the wrong type in a built-in kind answers 422 Invalid (schema validation) instead of 400 BadRequest"},
	CustomTypeErrors400:        {SeamHTTP, "a custom resource value of the wrong type answers 400 BadRequest (decoded into a typed struct, like an aggregated server's kinds) instead of 422 Invalid"},
	SentManagedFieldsIgnored:   {SeamHTTP, "an update or a merge or strategic merge patch that sends metadata.managedFields keeps the stored entries (the list sent is dropped), so they can be neither replaced nor cleared"},
	ServerSetFieldsOwned:       {SeamHTTP, "a namespace's Update entries own the finalizer and phase the server set on its create (fields recorded after the strategy ran, not before)"},
	SubresourceEntriesUnmarked: {SeamHTTP, "managedFields entries of writes through /status do not name the subresource (every write recorded as the main resource's)"},
}

type writesPlanKey struct{}

func writesPlanOf(r *http.Request) plan {
	p, _ := r.Context().Value(writesPlanKey{}).(plan)
	return p
}

// rewriteWritesRequest applies this file's request-side faults.
func (m *middleware) rewriteWritesRequest(r *http.Request, c *call) *http.Request {
	a, ok := parsePath(r.URL.Path)
	if !ok || c.watch {
		return r
	}
	m.rewriteWritesQuery(r, c)
	r, p := m.planWrites(r, c, a)
	if p != nil {
		r = r.WithContext(context.WithValue(r.Context(), writesPlanKey{}, p))
	}
	return r
}

// Patch content types.
const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch"
)

// rewriteWritesQuery rewrites the query, headers and body of r. It encodes
// the query again only when it changed it: an earlier file's fault may have
// emptied it on purpose (harmless).
func (m *middleware) rewriteWritesQuery(r *http.Request, c *call) {
	q := c.q
	ct := r.Header.Get("Content-Type")
	switch {
	case m.has(OptionValuesUnchecked) && r.Method != http.MethodGet:
		before := len(q)
		if vs, ok := q["dryRun"]; ok && !(len(vs) == 1 && vs[0] == "All") {
			q.Del("dryRun")
		}
		if vs, ok := q["fieldValidation"]; ok && !(len(vs) == 1 && (vs[0] == "Ignore" || vs[0] == "Warn" || vs[0] == "Strict")) {
			q.Del("fieldValidation")
		}
		if len(q) != before {
			r.URL.RawQuery = q.Encode()
		}
	case m.has(TableAnswersJSON) && r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "as=Table"):
		r.Header.Set("Accept", "application/json")
	case m.has(UnknownPatchTypeAsMerge) && r.Method == http.MethodPatch && !knownPatchType(ct):
		r.Header.Set("Content-Type", mergePatchType)
	case m.has(SentManagedFieldsIgnored) && c.sub == "" && !c.collection && (r.Method == http.MethodPut && isJSON(ct) ||
		r.Method == http.MethodPatch && (strings.HasPrefix(ct, mergePatchType) || strings.HasPrefix(ct, strategicPatchType))):
		editBody(r, func(o map[string]any) {
			if md, ok := o["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
		})
	case m.has(PatchNullIgnored) && r.Method == http.MethodPatch && (strings.HasPrefix(ct, mergePatchType) || strings.HasPrefix(ct, strategicPatchType)):
		editBody(r, func(o map[string]any) { dropNulls(o) })
	case m.has(PutMerges) && r.Method == http.MethodPut && !c.collection && c.sub == "" && isJSON(ct):
		r.Method = http.MethodPatch
		r.Header.Set("Content-Type", mergePatchType)
	case m.has(ApplyAsMergePatch) && r.Method == http.MethodPatch && strings.HasPrefix(ct, applyPatchType) && q.Has("force"):
		q.Del("force") // a merge patch takes no force
		r.URL.RawQuery = q.Encode()
	}
	r.RequestURI = r.URL.RequestURI()
}

func knownPatchType(ct string) bool {
	for _, t := range []string{jsonPatchType, mergePatchType, strategicPatchType, applyPatchType} {
		if strings.HasPrefix(ct, t) {
			return true
		}
	}
	return false
}

func isJSON(ct string) bool { return ct == "" || strings.Contains(ct, "json") }

// planWrites runs the faults that ask the handler for state first or rewrite
// the answer: it returns the request to pass on and what to do with its
// answer (nil: nothing).
func (m *middleware) planWrites(r *http.Request, c *call, a apiPath) (*http.Request, plan) {
	ct := r.Header.Get("Content-Type")
	write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
	update := (r.Method == http.MethodPut || r.Method == http.MethodPatch) && !c.collection && c.q.Get("dryRun") == ""
	var p plan
	switch {
	case (m.has(ApplyAsMergePatch) || m.has(ApplyRequiresExisting)) && r.Method == http.MethodPatch &&
		strings.HasPrefix(ct, applyPatchType) && !c.collection:
		body, err := yaml.YAMLToJSON(peekBody(r))
		if err != nil {
			break
		}
		missing := m.internal(r, http.MethodGet, r.URL.Path, nil, nil).code == http.StatusNotFound
		if m.has(ApplyRequiresExisting) && !missing {
			break
		}
		// Missing under apply-requires-existing: a merge patch, which
		// answers 404. Under apply-as-merge-patch: a create, or a merge.
		r.Method, ct = http.MethodPatch, mergePatchType
		if m.has(ApplyAsMergePatch) && missing && c.sub == "" {
			r.Method, ct = http.MethodPost, "application/json"
			r.URL.Path = a.collection()
		}
		setBody(r, body, ct)
	case m.has(JSONPatchUnsupported) && r.Method == http.MethodPatch && strings.HasPrefix(ct, jsonPatchType):
		r = harmless(r)
		p = func(rec *recorder) {
			writeStatus(rec, http.StatusUnsupportedMediaType, "UnsupportedMediaType",
				"the body of the request was in an unknown format - accepted media types include: "+
					mergePatchType+", "+strategicPatchType+", application/apply-patch+yaml", map[string]any{})
		}
	case m.has(StatusWrittenThroughMain) && a.group != "" && c.sub == "" &&
		(r.Method == http.MethodPost && c.collection || r.Method == http.MethodPut && !c.collection):
		var sent struct {
			Status map[string]any `json:"status"`
		}
		if json.Unmarshal(peekBody(r), &sent) != nil || sent.Status == nil {
			break
		}
		patch, _ := json.Marshal(map[string]any{"status": sent.Status})
		p = func(rec *recorder) {
			name := jsonField(rec, "metadata", "name")
			if rec.code != http.StatusOK && rec.code != http.StatusCreated || name == "" {
				return
			}
			got := m.internalAs(r, http.MethodPatch, a.collection()+"/"+name+"/status", url.Values{}, patch, mergePatchType)
			if got.code == http.StatusOK {
				code := rec.code
				rec.replace(got)
				rec.code = code
			}
		}
	case m.has(DryRunEchoesRequest) && c.q.Get("dryRun") == "All" &&
		(r.Method == http.MethodPost && c.collection || r.Method == http.MethodPut && !c.collection) && isJSON(ct):
		body, code := peekBody(r), http.StatusOK
		if r.Method == http.MethodPost {
			code = http.StatusCreated
		}
		r = harmless(r)
		p = func(rec *recorder) {
			rec.header = http.Header{"Content-Type": {"application/json"}}
			rec.code = code
			rec.body.Reset()
			rec.body.Write(bytes.TrimSpace(body))
			rec.body.WriteByte('\n')
		}
	case (m.has(TableNameColumnOnly) && a.group != "" || m.has(TableRowsWithoutObject)) && r.Method == http.MethodGet &&
		strings.Contains(r.Header.Get("Accept"), "as=Table"):
		p = func(rec *recorder) {
			if rec.code != http.StatusOK || jsonField(rec, "kind") != "Table" {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				rows, _ := o["rows"].([]any)
				cols, _ := o["columnDefinitions"].([]any)
				for _, x := range rows {
					row, _ := x.(map[string]any)
					if row == nil {
						continue
					}
					if m.has(TableRowsWithoutObject) {
						delete(row, "object")
					}
					if cells, ok := row["cells"].([]any); ok && m.has(TableNameColumnOnly) && len(cells) > 1 {
						row["cells"] = cells[:1]
					}
				}
				if m.has(TableNameColumnOnly) && len(cols) > 1 {
					o["columnDefinitions"] = cols[:1]
				}
			})
		}
	case m.has(UnacceptableAnswersJSON) && r.Method == http.MethodGet:
		p = func(rec *recorder) {
			if rec.code == http.StatusNotAcceptable {
				rec.replace(m.internal(r, http.MethodGet, r.URL.Path, c.q, nil))
			}
		}
	case m.has(MethodNotAllowedAs404):
		p = func(rec *recorder) {
			if rec.code == http.StatusMethodNotAllowed {
				writeStatus(rec, http.StatusNotFound, "NotFound", "the server could not find the requested resource", map[string]any{})
			}
		}
	case m.has(ClientErrorsAs500) && write:
		p = func(rec *recorder) {
			if rec.code == http.StatusBadRequest || rec.code == http.StatusRequestEntityTooLarge {
				writeStatus(rec, http.StatusInternalServerError, "InternalError",
					"Internal error occurred: "+jsonField(rec, "message"), map[string]any{})
			}
		}
	case m.has(DeleteAnswersObject) && r.Method == http.MethodDelete && !c.collection:
		before := m.internal(r, http.MethodGet, r.URL.Path, nil, nil)
		p = func(rec *recorder) {
			if rec.code == http.StatusOK && jsonField(rec, "kind") == "Status" && before.code == http.StatusOK {
				rec.replace(before)
			}
		}
	case m.has(DeletionTimestampClearable) && update && c.sub == "" && clearsDeletionTimestamp(r, ct):
		p = func(rec *recorder) {
			if rec.code != http.StatusOK {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				if md, ok := o["metadata"].(map[string]any); ok && md["deletionTimestamp"] != nil {
					if uid, _ := md["uid"].(string); uid != "" {
						m.clearedDeletions.Store(uid, true)
					}
					delete(md, "deletionTimestamp")
				}
			})
		}
	case m.has(DeletionTimestampClearable):
		p = func(rec *recorder) {
			editObjects(rec, func(_ string, md map[string]any) {
				if uid, _ := md["uid"].(string); uid != "" {
					if _, ok := m.clearedDeletions.Load(uid); ok {
						delete(md, "deletionTimestamp")
					}
				}
			})
		}
	case m.has(UpdateManagersNotRecorded):
		p = func(rec *recorder) {
			editObjects(rec, func(_ string, md map[string]any) {
				mfs, ok := md["managedFields"].([]any)
				if !ok {
					return
				}
				kept := []any{}
				for _, x := range mfs {
					if mf, _ := x.(map[string]any); mf["operation"] != "Update" {
						kept = append(kept, x)
					}
				}
				md["managedFields"] = kept
			})
		}
	case m.has(SubresourceEntriesUnmarked):
		p = func(rec *recorder) {
			editObjects(rec, func(_ string, md map[string]any) {
				mfs, _ := md["managedFields"].([]any)
				for _, x := range mfs {
					if e, ok := x.(map[string]any); ok {
						delete(e, "subresource")
					}
				}
			})
		}
	case m.has(ServerSetFieldsOwned):
		p = func(rec *recorder) {
			editObjects(rec, func(kind string, md map[string]any) {
				if kind != "Namespace" {
					return
				}
				mfs, _ := md["managedFields"].([]any)
				for _, x := range mfs {
					e, _ := x.(map[string]any)
					fields, _ := e["fieldsV1"].(map[string]any)
					if e["operation"] != "Update" || e["subresource"] != nil || fields == nil {
						continue
					}
					fields["f:spec"] = map[string]any{".": map[string]any{}, "f:finalizers": map[string]any{}}
					fields["f:status"] = map[string]any{".": map[string]any{}, "f:phase": map[string]any{}}
				}
			})
		}
	case m.has(UIDFromName):
		p = func(rec *recorder) {
			editObjects(rec, func(_ string, md map[string]any) {
				if md["uid"] != nil {
					ns, _ := md["namespace"].(string)
					name, _ := md["name"].(string)
					md["uid"] = nameUID(c.resource, ns, name)
				}
			})
			if r.Method == http.MethodDelete && jsonField(rec, "kind") == "Status" {
				editObjectAnswer(rec, func(o map[string]any) {
					if d, ok := o["details"].(map[string]any); ok && d["uid"] != nil {
						d["uid"] = nameUID(c.resource, a.ns, c.name)
					}
				})
			}
		}
	case m.has(TimestampsGoFormat):
		p = func(rec *recorder) {
			editObjects(rec, func(_ string, md map[string]any) {
				for _, k := range []string{"creationTimestamp", "deletionTimestamp"} {
					if s, ok := md[k].(string); ok {
						if t, err := time.Parse(time.RFC3339, s); err == nil {
							md[k] = t.UTC().String()
						}
					}
				}
			})
		}
	case (m.has(GenerationOnEveryWrite) || m.has(WriteAnswerOldRV)) && update:
		before := m.internal(r, http.MethodGet, r.URL.Path, nil, nil)
		if before.code != http.StatusOK {
			break
		}
		var was struct {
			Metadata struct {
				Generation      *int64 `json:"generation"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if json.Unmarshal(before.body.Bytes(), &was) != nil {
			break
		}
		p = func(rec *recorder) {
			if rec.code != http.StatusOK {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				md, _ := o["metadata"].(map[string]any)
				switch {
				case md == nil:
				case m.has(WriteAnswerOldRV):
					md["resourceVersion"] = was.Metadata.ResourceVersion
				case was.Metadata.Generation != nil && fmt.Sprint(md["generation"]) == fmt.Sprint(*was.Metadata.Generation):
					md["generation"] = *was.Metadata.Generation + 1
				}
			})
		}
	case m.has(BuiltinTypeErrors422) && write && a.group == "":
		name := bodyName(r)
		p = func(rec *recorder) {
			msg := jsonField(rec, "message")
			if rec.code != http.StatusBadRequest || !strings.Contains(msg, "cannot be handled as a ") {
				return
			}
			kind := msg[strings.LastIndex(msg, "cannot be handled as a ")+len("cannot be handled as a "):]
			kind, _, _ = strings.Cut(kind, ":")
			field := goStructField(msg)
			cause := "Invalid value: the value is of the wrong type"
			writeStatus(rec, http.StatusUnprocessableEntity, "Invalid", fmt.Sprintf("%s %q is invalid: %s: %s", kind, name, field, cause),
				map[string]any{"name": name, "kind": kind, "causes": []any{map[string]any{
					"reason": "FieldValueTypeInvalid", "message": cause, "field": field}}})
		}
	case m.has(CustomTypeErrors400) && write && a.group != "":
		p = func(rec *recorder) {
			if rec.code != http.StatusUnprocessableEntity || !hasCause(rec, "FieldValueTypeInvalid") {
				return
			}
			kind := jsonField(rec, "details", "kind")
			version := a.prefix[strings.LastIndex(a.prefix, "/")+1:]
			writeStatus(rec, http.StatusBadRequest, "BadRequest", fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
				kind, version, kind, jsonField(rec, "message")), map[string]any{})
		}
	}
	return r, p
}

// writesRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) writesRewriteResponse(r *http.Request, c call) bool {
	return writesPlanOf(r) != nil
}

// afterWrites rewrites a buffered answer for this file's faults.
func (m *middleware) afterWrites(r *http.Request, c call, rec *recorder) {
	if p := writesPlanOf(r); p != nil {
		p(rec)
	}
}

// setBody replaces r's body and Content-Type.
func setBody(r *http.Request, b []byte, ct string) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Del("Content-Length")
	r.Header.Set("Content-Type", ct)
	r.RequestURI = r.URL.RequestURI()
}

// dropNulls removes every null value of o's maps, at every depth.
func dropNulls(o map[string]any) {
	for k, v := range o {
		switch x := v.(type) {
		case nil:
			delete(o, k)
		case map[string]any:
			dropNulls(x)
		}
	}
}

// clearsDeletionTimestamp says whether r's body unsets
// metadata.deletionTimestamp (a null in a merge patch, a JSON Patch remove,
// or an update body without it).
func clearsDeletionTimestamp(r *http.Request, ct string) bool {
	body := peekBody(r)
	if strings.HasPrefix(ct, jsonPatchType) {
		var ops []struct{ Op, Path string }
		if json.Unmarshal(body, &ops) != nil {
			return false
		}
		for _, op := range ops {
			if op.Op == "remove" && op.Path == "/metadata/deletionTimestamp" {
				return true
			}
		}
		return false
	}
	var o struct {
		Metadata map[string]any `json:"metadata"`
	}
	if json.Unmarshal(body, &o) != nil {
		return false
	}
	v, ok := o.Metadata["deletionTimestamp"]
	if r.Method == http.MethodPut {
		return !ok || v == nil
	}
	return ok && v == nil
}

// editObjects hands the metadata of a JSON object answer, or of each item
// of a list answer, to edit.
func editObjects(rec *recorder, edit func(kind string, md map[string]any)) {
	editObjectAnswer(rec, func(o map[string]any) {
		kind, _ := o["kind"].(string)
		eachObject(o, func(obj map[string]any) {
			if md, ok := obj["metadata"].(map[string]any); ok {
				edit(kind, md)
			}
		})
	})
}

// nameUID is a uid made from an object's resource, namespace and name.
func nameUID(resource, ns, name string) string {
	h := sha1.Sum([]byte(resource + "/" + ns + "/" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

var goField = regexp.MustCompile(`Go struct field \w+\.([\w.]+) of type`)

// goStructField is the field a Go decoding error names ("" when none).
func goStructField(msg string) string {
	if m := goField.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// hasCause says whether a Status answer has a cause with reason.
func hasCause(rec *recorder, reason string) bool {
	var st struct {
		Details struct{ Causes []struct{ Reason string } }
	}
	if json.Unmarshal(rec.body.Bytes(), &st) != nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Reason == reason {
			return true
		}
	}
	return false
}
