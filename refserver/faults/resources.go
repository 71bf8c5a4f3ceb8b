package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Deviations of the resources and deletion areas (API concepts: names,
// verbs, URIs, representations; API conventions: labels, status codes,
// validation; resource deletion).
//
// Each fault rewrites the request before the API handler sees it and may
// leave a plan (in the request's context) that afterResources runs on the
// buffered answer. A fault that answers by itself first turns the request
// into a harmless GET, so the handler changes nothing. Of the faults that
// plan, the first that applies to a request wins.

// Fault names.
const (
	NamesUniqueAcrossNamespaces = "names-unique-across-namespaces"
	InvalidNamesNormalized      = "invalid-names-normalized"
	MissingNameGenerated        = "missing-name-generated"
	PutCollectionCreates        = "put-collection-creates"
	PutCreatesMissing           = "put-creates-missing"
	UnknownSubresourceIsParent  = "unknown-subresource-serves-parent"
	ClusterScopedUnderNamespace = "cluster-scoped-under-namespace"
	NamespaceCreatedOnDemand    = "namespace-created-on-demand"
	CreateAcceptsList           = "create-accepts-list"
	InvalidLabelsDropped        = "invalid-labels-dropped"
	InvalidAnnotationsDropped   = "invalid-annotations-dropped"
	TableNotPreferred           = "table-not-preferred"
	TableNotPaged               = "table-not-paged"
	TableParameterOrder         = "table-parameter-order"
	OptionsAnswers404           = "options-answers-404"
	RequiredFieldsZeroed        = "required-fields-zeroed"
	CreateAnswerOmitsDefaults   = "create-answer-omits-defaults"
	DefaultAnswersYAML          = "default-answers-yaml"
	DiscoveryKindNames          = "discovery-kind-names"
	GetOmitsTypeMeta            = "get-omits-type-meta"
	ErrorsAnswer200             = "errors-answer-200"
	ValidationAnswers400        = "validation-answers-400"
	ValidationFirstErrorOnly    = "validation-first-error-only"
	MalformedListRVIgnored      = "malformed-list-rv-ignored"
	SMPReplaceIgnored           = "smp-replace-ignored"
	SizeLimitOnRequestBody      = "size-limit-on-request-body"
	ProtobufCustomResourceJSON  = "protobuf-custom-resource-json"
	SecondDeleteConflicts       = "second-delete-conflicts"
	SecondDeleteRestamps        = "second-delete-restamps"
	FinalizerReorderRefused     = "finalizer-reorder-refused"
	NewFinalizersDropped        = "new-finalizers-dropped"
	PropagationPolicyIgnored    = "propagation-policy-ignored"
	BackgroundAsForeground      = "background-as-foreground"
	SchemaConstraintsIgnored    = "schema-constraints-ignored"
	NullFieldRefused            = "null-field-refused"
)

var resourceFaults = map[string]fault{
	NamesUniqueAcrossNamespaces: {SeamHTTP, "a name is unique per kind across all namespaces (a store keyed by kind and name): the same name in another namespace answers 409"},
	InvalidNamesNormalized:      {SeamHTTP, "invalid object names are normalized (lower-cased, other characters to '-', cut to 253) instead of refused"},
	MissingNameGenerated:        {SeamHTTP, "a create with neither name nor generateName gets a generated name instead of 422"},
	PutCollectionCreates:        {SeamHTTP, "PUT on a collection URL is served as a create (201) instead of 405"},
	PutCreatesMissing:           {SeamHTTP, "PUT of an object that does not exist creates it (upsert) instead of 404"},
	UnknownSubresourceIsParent:  {SeamHTTP, "a GET of a subresource the resource does not have is answered with the parent object"},
	ClusterScopedUnderNamespace: {SeamHTTP, "a cluster-scoped resource is served under /namespaces/NS/ too (the namespace segment ignored)"},
	NamespaceCreatedOnDemand:    {SeamHTTP, "a create in a namespace that does not exist creates the namespace instead of answering 404"},
	CreateAcceptsList:           {SeamHTTP, "a create whose body is a List creates each item (201) instead of 400"},
	InvalidLabelsDropped:        {SeamHTTP, "labels with an invalid key or value are dropped silently instead of refused"},
	InvalidAnnotationsDropped:   {SeamHTTP, "annotations with an invalid key are dropped silently instead of refused"},
	TableNotPreferred:           {SeamHTTP, "an Accept list naming the Table type before application/json is answered in plain JSON"},
	TableNotPaged:               {SeamHTTP, "Table lists ignore limit and continue (every row in one answer)"},
	TableParameterOrder:         {SeamHTTP, "the Table type is recognized only with its parameters in kubectl's order (as=Table;g=meta.k8s.io;v=v1): other orders get plain JSON"},
	OptionsAnswers404:           {SeamHTTP, "OPTIONS on a resource URL answers 404 NotFound"},
	RequiredFieldsZeroed:        {SeamHTTP, "required custom resource fields left unset are filled with zero values instead of refused"},
	CreateAnswerOmitsDefaults:   {SeamHTTP, "the create answer carries only the fields sent: defaults show only in later reads"},
	DefaultAnswersYAML:          {SeamHTTP, "a request without an Accept type (or */*) is answered in YAML"},
	DiscoveryKindNames:          {SeamHTTP, "discovery names resource types after their kind (ConfigMaps) instead of the lower-case plural"},
	GetOmitsTypeMeta:            {SeamHTTP, "an object answered to a GET carries no kind and apiVersion"},
	ErrorsAnswer200:             {SeamHTTP, "errors are answered with HTTP 200 and a Failure Status body"},
	ValidationAnswers400:        {SeamHTTP, "validation failures answer 400 BadRequest instead of 422 Invalid"},
	ValidationFirstErrorOnly:    {SeamHTTP, "a validation failure names only the first invalid field"},
	MalformedListRVIgnored:      {SeamHTTP, "a list at a resourceVersion that does not parse is served as a list at the latest one"},
	SMPReplaceIgnored:           {SeamHTTP, "$patch: replace inside a map of a strategic merge patch is ignored (the map is merged)"},
	SizeLimitOnRequestBody:      {SeamHTTP, "objects are size-limited by request body (413 over 1 MiB) instead of by their values"},
	ProtobufCustomResourceJSON:  {SeamHTTP, "a custom resource asked for in protobuf only is answered in JSON instead of 406"},
	SecondDeleteConflicts:       {SeamHTTP, "a DELETE of an object already being deleted answers 409 Conflict"},
	SecondDeleteRestamps:        {SeamHTTP, "a DELETE of an object already being deleted answers it with a new deletionTimestamp"},
	FinalizerReorderRefused:     {SeamHTTP, "reordering the finalizers of an object being deleted is refused (lists compared by position)"},
	NewFinalizersDropped:        {SeamHTTP, "a finalizer added to an object being deleted is dropped silently (200) instead of refused"},
	PropagationPolicyIgnored:    {SeamHTTP, "DELETE ignores propagationPolicy (no foregroundDeletion or orphan finalizer)"},
	BackgroundAsForeground:      {SeamHTTP, "propagationPolicy=Background is served as Foreground (the object waits on a foregroundDeletion finalizer)"},
	SchemaConstraintsIgnored:    {SeamHTTP, "custom resources are checked against their schema's types and required fields only: minimum, maximum, enum, pattern, length, count and format constraints are ignored"},
	NullFieldRefused:            {SeamHTTP, "a custom resource field sent as null is refused as a type error (422) instead of treated as unset (defaulted, or left out)"},
}

// plan rewrites the buffered answer to one request.
type plan func(rec *recorder)

type planKey struct{}

func planOf(r *http.Request) plan {
	p, _ := r.Context().Value(planKey{}).(plan)
	return p
}

func withPlan(r *http.Request, p plan) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), planKey{}, p))
}

// apiPath is an API URL path taken apart: /api/v1/namespaces/ns/configmaps/x
// is prefix /api/v1, namespace ns, rest [configmaps x].
type apiPath struct {
	prefix, group, ns string
	rest              []string
}

func parsePath(p string) (apiPath, bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var a apiPath
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		a.prefix, segs = "/api/"+segs[1], segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		a.prefix, a.group, segs = "/apis/"+segs[1]+"/"+segs[2], segs[1], segs[3:]
	default:
		return a, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		a.ns, segs = segs[1], segs[2:]
	}
	a.rest = segs
	return a, len(segs) > 0
}

// collection is the URL of the collection the path is in.
func (a apiPath) collection() string {
	if a.ns != "" {
		return a.prefix + "/namespaces/" + a.ns + "/" + a.rest[0]
	}
	return a.prefix + "/" + a.rest[0]
}

// rewriteResourcesRequest applies this file's request-side faults.
func (m *middleware) rewriteResourcesRequest(r *http.Request, c *call) *http.Request {
	a, ok := parsePath(r.URL.Path)
	if !ok {
		return r
	}
	m.rewriteResourcesQuery(r, c)
	m.rewriteResourcesBody(r, c, a)
	r, p := m.planResourcesAnswer(r, c, a)
	if p != nil {
		r = withPlan(r, p)
	}
	return r
}

// rewriteResourcesQuery rewrites the query and headers of r.
func (m *middleware) rewriteResourcesQuery(r *http.Request, c *call) {
	q := c.q
	accept := r.Header.Get("Accept")
	isTable := strings.Contains(accept, "as=Table")
	switch {
	case m.has(TableNotPreferred) && r.Method == http.MethodGet && isTable && strings.Contains(accept, ","):
		r.Header.Set("Accept", "application/json")
	case m.has(TableParameterOrder) && r.Method == http.MethodGet && isTable && !strings.Contains(accept, "as=Table;g=meta.k8s.io;v=v1"):
		r.Header.Set("Accept", "application/json")
	case m.has(TableNotPaged) && c.list && isTable:
		q.Del("limit")
		q.Del("continue")
	case m.has(DefaultAnswersYAML) && r.Method == http.MethodGet && (accept == "" || accept == "*/*"):
		r.Header.Set("Accept", "application/yaml")
	case m.has(MalformedListRVIgnored) && c.list && q.Get("resourceVersion") != "":
		if _, err := strconv.ParseUint(q.Get("resourceVersion"), 10, 64); err != nil {
			q.Del("resourceVersion")
		}
	case m.has(PutCollectionCreates) && r.Method == http.MethodPut && c.collection:
		r.Method = http.MethodPost
	case m.has(PropagationPolicyIgnored) && r.Method == http.MethodDelete:
		q.Del("propagationPolicy")
		q.Del("orphanDependents")
		editBody(r, func(o map[string]any) {
			delete(o, "propagationPolicy")
			delete(o, "orphanDependents")
		})
	case m.has(BackgroundAsForeground) && r.Method == http.MethodDelete:
		if q.Get("propagationPolicy") == "Background" {
			q.Set("propagationPolicy", "Foreground")
		}
		editBody(r, func(o map[string]any) {
			if o["propagationPolicy"] == "Background" {
				o["propagationPolicy"] = "Foreground"
			}
		})
	}
	r.URL.RawQuery = q.Encode()
	r.RequestURI = r.URL.RequestURI()
}

// rewriteResourcesBody rewrites the JSON body of r.
func (m *middleware) rewriteResourcesBody(r *http.Request, c *call, a apiPath) {
	switch {
	case m.has(InvalidNamesNormalized) && r.Method == http.MethodPost && c.collection && c.resource != "namespaces":
		editBody(r, func(o map[string]any) {
			if md, ok := o["metadata"].(map[string]any); ok {
				if n, _ := md["name"].(string); n != "" && len(validation.IsDNS1123Subdomain(n)) > 0 {
					md["name"] = normalizeName(n)
				}
			}
		})
	case m.has(MissingNameGenerated) && r.Method == http.MethodPost && c.collection:
		editBody(r, func(o map[string]any) {
			md, _ := o["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				o["metadata"] = md
			}
			if md["name"] == nil && md["generateName"] == nil {
				kind, _ := o["kind"].(string)
				if kind == "" {
					kind = c.resource
				}
				md["generateName"] = strings.ToLower(kind) + "-"
			}
		})
	case (m.has(InvalidLabelsDropped) || m.has(InvalidAnnotationsDropped)) && (r.Method == http.MethodPost || r.Method == http.MethodPut):
		editBody(r, func(o map[string]any) {
			md, _ := o["metadata"].(map[string]any)
			if ls, ok := md["labels"].(map[string]any); ok && m.has(InvalidLabelsDropped) {
				for k, v := range ls {
					s, _ := v.(string)
					if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(s)) > 0 {
						delete(ls, k)
					}
				}
			}
			if as, ok := md["annotations"].(map[string]any); ok && m.has(InvalidAnnotationsDropped) {
				for k := range as {
					if len(validation.IsQualifiedName(strings.ToLower(k))) > 0 {
						delete(as, k)
					}
				}
			}
		})
	case m.has(SMPReplaceIgnored) && r.Method == http.MethodPatch && strings.HasPrefix(r.Header.Get("Content-Type"), "application/strategic-merge-patch+json"):
		editBody(r, func(o map[string]any) { dropReplaceDirectives(o) })
	case m.has(SchemaConstraintsIgnored) && (r.Method == http.MethodPost || r.Method == http.MethodPut) && a.group == "apiextensions.k8s.io" &&
		len(a.rest) > 0 && a.rest[0] == "customresourcedefinitions":
		editBody(r, func(o map[string]any) {
			spec, _ := o["spec"].(map[string]any)
			versions, _ := spec["versions"].([]any)
			for _, v := range versions {
				vm, _ := v.(map[string]any)
				sch, _ := vm["schema"].(map[string]any)
				if root, ok := sch["openAPIV3Schema"].(map[string]any); ok {
					dropConstraints(root)
				}
			}
		})
	case m.has(RequiredFieldsZeroed) && (r.Method == http.MethodPost || r.Method == http.MethodPut) && a.group != "" && c.sub == "":
		if schema := m.crdSchema(r, a); schema != nil {
			editBody(r, func(o map[string]any) { fillRequired(o, schema) })
		}
	}
}

// planResourcesAnswer runs the faults that ask the handler for state first or
// rewrite the answer: it returns the request to pass on and what to do with
// its answer (nil: nothing).
func (m *middleware) planResourcesAnswer(r *http.Request, c *call, a apiPath) (*http.Request, plan) {
	accept := r.Header.Get("Accept")
	write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
	var p plan
	switch {
	case m.has(NamesUniqueAcrossNamespaces) && r.Method == http.MethodPost && c.collection && a.ns != "":
		name := bodyName(r)
		if name == "" {
			break
		}
		all := m.internal(r, http.MethodGet, a.prefix+"/"+a.rest[0], url.Values{"fieldSelector": {"metadata.name=" + name}}, nil)
		var list struct {
			Items []struct {
				Metadata struct{ Namespace string } `json:"metadata"`
			} `json:"items"`
		}
		if all.code != http.StatusOK || json.Unmarshal(all.body.Bytes(), &list) != nil {
			break
		}
		for _, it := range list.Items {
			if it.Metadata.Namespace != a.ns {
				r = harmless(r)
				p = func(rec *recorder) {
					writeStatus(rec, http.StatusConflict, "AlreadyExists", c.resource+` "`+name+`" already exists`,
						map[string]any{"name": name, "group": a.group, "kind": c.resource})
				}
				break
			}
		}
	case m.has(PutCreatesMissing) && r.Method == http.MethodPut && !c.collection && c.sub == "":
		if m.internal(r, http.MethodGet, r.URL.Path, nil, nil).code == http.StatusNotFound {
			r.Method = http.MethodPost
			r.URL.Path = a.collection()
			r.RequestURI = r.URL.RequestURI()
			editBody(r, func(o map[string]any) {
				if md, ok := o["metadata"].(map[string]any); ok {
					delete(md, "resourceVersion")
				}
			})
		}
	case (m.has(UnknownSubresourceIsParent) && c.sub != "" || m.has(ClusterScopedUnderNamespace) && a.ns != "") && r.Method == http.MethodGet:
		alt := a.collection()
		if len(a.rest) > 1 {
			alt += "/" + a.rest[1]
		}
		if m.has(ClusterScopedUnderNamespace) {
			alt = a.prefix + "/" + strings.Join(a.rest, "/")
		}
		p = func(rec *recorder) {
			if !routeNotFound(rec) {
				return
			}
			if again := m.internalAs(r, http.MethodGet, alt, c.q, nil, ""); again.code == http.StatusOK {
				rec.replace(again)
			}
		}
	case m.has(NullFieldRefused) && (r.Method == http.MethodPost || r.Method == http.MethodPut) && a.group != "" &&
		a.group != "apiextensions.k8s.io" && c.sub == "":
		var o map[string]any
		if json.Unmarshal(peekBody(r), &o) != nil {
			break
		}
		delete(o, "metadata")
		field := firstNull(o, "")
		if field == "" {
			break
		}
		kind, _ := o["kind"].(string)
		name := bodyName(r)
		r = harmless(r)
		p = func(rec *recorder) {
			msg := `Invalid value: "null": ` + field + ` in body must not be null`
			writeStatus(rec, http.StatusUnprocessableEntity, "Invalid", kind+"."+a.group+` "`+name+`" is invalid: `+field+": "+msg,
				map[string]any{"name": name, "group": a.group, "kind": kind, "causes": []any{map[string]any{
					"reason": "FieldValueTypeInvalid", "message": msg, "field": field}}})
		}
	case m.has(NamespaceCreatedOnDemand) && r.Method == http.MethodPost && c.collection && a.ns != "":
		body := peekBody(r)
		p = func(rec *recorder) {
			if rec.code != http.StatusNotFound || jsonField(rec, "details", "kind") != "namespaces" {
				return
			}
			ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":` + strconv.Quote(a.ns) + `}}`
			m.internal(r, http.MethodPost, "/api/v1/namespaces", nil, []byte(ns))
			rec.replace(m.internalAs(r, http.MethodPost, r.URL.Path, c.q, body, ""))
		}
	case m.has(CreateAcceptsList) && r.Method == http.MethodPost && c.collection:
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		body := peekBody(r)
		if json.Unmarshal(body, &list) != nil || !strings.HasSuffix(list.Kind, "List") {
			break
		}
		path := r.URL.Path
		r = harmless(r)
		p = func(rec *recorder) {
			items := []json.RawMessage{}
			for _, it := range list.Items {
				got := m.internal(r, http.MethodPost, path, nil, it)
				if got.code != http.StatusCreated {
					rec.replace(got)
					return
				}
				items = append(items, json.RawMessage(bytes.TrimSpace(got.body.Bytes())))
			}
			out, _ := json.Marshal(map[string]any{"kind": list.Kind, "apiVersion": "v1", "metadata": map[string]any{}, "items": items})
			rec.header.Set("Content-Type", "application/json")
			rec.code = http.StatusCreated
			rec.body.Reset()
			rec.body.Write(out)
		}
	case m.has(OptionsAnswers404) && r.Method == http.MethodOptions:
		r = harmless(r)
		p = func(rec *recorder) {
			writeStatus(rec, http.StatusNotFound, "NotFound", "the server could not find the requested resource", map[string]any{})
		}
	case m.has(CreateAnswerOmitsDefaults) && r.Method == http.MethodPost && c.collection:
		var sent map[string]any
		if json.Unmarshal(peekBody(r), &sent) != nil {
			break
		}
		p = func(rec *recorder) {
			if rec.code != http.StatusCreated {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				for k, v := range o {
					if k != "metadata" && k != "kind" && k != "apiVersion" {
						if s, ok := sent[k]; ok {
							pruneTo(v, s)
						} else {
							delete(o, k)
						}
					}
				}
			})
		}
	case m.has(GetOmitsTypeMeta) && r.Method == http.MethodGet && !c.collection && !c.watch:
		p = func(rec *recorder) {
			if rec.code != http.StatusOK {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				delete(o, "kind")
				delete(o, "apiVersion")
			})
		}
	case m.has(ErrorsAnswer200):
		p = func(rec *recorder) {
			if rec.code >= 400 && jsonField(rec, "kind") == "Status" {
				rec.code = http.StatusOK
			}
		}
	case m.has(ValidationAnswers400):
		p = func(rec *recorder) {
			if rec.code != http.StatusUnprocessableEntity {
				return
			}
			rec.code = http.StatusBadRequest
			editObjectAnswer(rec, func(o map[string]any) {
				o["code"], o["reason"] = http.StatusBadRequest, "BadRequest"
			})
		}
	case m.has(ValidationFirstErrorOnly) && write:
		p = func(rec *recorder) {
			if rec.code != http.StatusUnprocessableEntity {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				if d, ok := o["details"].(map[string]any); ok {
					if cs, ok := d["causes"].([]any); ok && len(cs) > 1 {
						d["causes"] = cs[:1]
					}
				}
			})
		}
	case m.has(SizeLimitOnRequestBody) && write && r.ContentLength > 1<<20:
		r = harmless(r)
		p = func(rec *recorder) {
			writeStatus(rec, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the request is too large", map[string]any{})
		}
	case m.has(ProtobufCustomResourceJSON) && r.Method == http.MethodGet && strings.Contains(accept, "protobuf") && !strings.Contains(accept, "json"):
		p = func(rec *recorder) {
			if rec.code == http.StatusNotAcceptable {
				rec.replace(m.internal(r, http.MethodGet, r.URL.Path, c.q, nil))
			}
		}
	case m.has(SecondDeleteConflicts) && r.Method == http.MethodDelete && !c.collection && c.q.Get("dryRun") == "":
		cur := m.internal(r, http.MethodGet, r.URL.Path, nil, nil)
		if cur.code != http.StatusOK || jsonField(cur, "metadata", "deletionTimestamp") == "" {
			break
		}
		r = harmless(r)
		p = func(rec *recorder) {
			writeStatus(rec, http.StatusConflict, "Conflict",
				`Operation cannot be fulfilled on `+c.resource+` "`+c.name+`": the object is being deleted`,
				map[string]any{"name": c.name, "group": a.group, "kind": c.resource})
		}
	case m.has(SecondDeleteRestamps) && r.Method == http.MethodDelete && !c.collection:
		cur := m.internal(r, http.MethodGet, r.URL.Path, nil, nil)
		if cur.code != http.StatusOK || jsonField(cur, "metadata", "deletionTimestamp") == "" {
			break
		}
		p = func(rec *recorder) {
			if rec.code != http.StatusOK {
				return
			}
			editObjectAnswer(rec, func(o map[string]any) {
				if md, ok := o["metadata"].(map[string]any); ok && md["deletionTimestamp"] != nil {
					md["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
				}
			})
		}
	case m.has(FinalizerReorderRefused) && (r.Method == http.MethodPut || r.Method == http.MethodPatch) && !c.collection && c.sub == "" && c.q.Get("dryRun") == "":
		cur := m.internal(r, http.MethodGet, r.URL.Path, nil, nil)
		if cur.code != http.StatusOK || jsonField(cur, "metadata", "deletionTimestamp") == "" {
			break
		}
		dq := url.Values{}
		for k, v := range c.q {
			dq[k] = v
		}
		dq.Set("dryRun", "All")
		after := m.internalAs(r, r.Method, r.URL.Path, dq, peekBody(r), r.Header.Get("Content-Type"))
		before, now := finalizersOf(cur), finalizersOf(after)
		if after.code != http.StatusOK || slices.Equal(before, now) || !sameSet(before, now) {
			break
		}
		kind := jsonField(cur, "kind")
		r = harmless(r)
		p = func(rec *recorder) {
			msg := "metadata.finalizers: Forbidden: finalizers of an object being deleted can only be removed"
			writeStatus(rec, http.StatusUnprocessableEntity, "Invalid", kind+` "`+c.name+`" is invalid: `+msg,
				map[string]any{"name": c.name, "group": a.group, "kind": kind, "causes": []any{map[string]any{
					"reason": "FieldValueForbidden", "message": "Forbidden: finalizers of an object being deleted can only be removed",
					"field": "metadata.finalizers"}}})
		}
	case m.has(NewFinalizersDropped) && (r.Method == http.MethodPut || r.Method == http.MethodPatch) && !c.collection && c.sub == "":
		p = func(rec *recorder) {
			if rec.code != http.StatusUnprocessableEntity || !onlyCause(rec, "metadata.finalizers", "FieldValueForbidden") {
				return
			}
			rec.replace(m.internal(r, http.MethodGet, r.URL.Path, nil, nil))
		}
	}
	return r, p
}

// resourcesRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) resourcesRewriteResponse(r *http.Request, c call) bool { return planOf(r) != nil }

// afterResources rewrites a buffered answer for this file's faults.
func (m *middleware) afterResources(r *http.Request, c call, rec *recorder) {
	if p := planOf(r); p != nil {
		p(rec)
	}
}

// serveResources answers the requests this file's faults take over before
// the middleware classifies them (discovery documents); false passes r on.
func (m *middleware) serveResources(w http.ResponseWriter, r *http.Request) bool {
	if !m.has(DiscoveryKindNames) || r.Method != http.MethodGet {
		return false
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if !(len(segs) == 2 && segs[0] == "api" || len(segs) == 3 && segs[0] == "apis") {
		return false
	}
	rec := newRecorder()
	m.next.ServeHTTP(rec, r)
	if rec.code == http.StatusOK && jsonField(rec, "kind") == "APIResourceList" {
		editObjectAnswer(rec, func(o map[string]any) {
			rs, _ := o["resources"].([]any)
			for _, x := range rs {
				res, _ := x.(map[string]any)
				name, _ := res["name"].(string)
				kind, _ := res["kind"].(string)
				if kind != "" && name != "" {
					if i := strings.Index(name, "/"); i >= 0 {
						res["name"] = kind + "s" + name[i:]
					} else {
						res["name"] = kind + "s"
					}
				}
			}
		})
	}
	rec.copyTo(w)
	return true
}

// internal sends a request of the middleware's own to the API handler, with
// the caller's credentials, asking for JSON.
func (m *middleware) internal(r *http.Request, method, path string, q url.Values, body []byte) *recorder {
	return m.internalAs(r, method, path, q, body, "application/json")
}

// internalAs is internal with a Content-Type ("" keeps the caller's).
func (m *middleware) internalAs(r *http.Request, method, path string, q url.Values, body []byte, ct string) *recorder {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(context.WithoutCancel(r.Context()), method, path, rd)
	req.URL.RawQuery = q.Encode()
	req.RequestURI = req.URL.RequestURI()
	req.Header = r.Header.Clone()
	req.Header.Del("Content-Length")
	req.Header.Set("Accept", "application/json")
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.RemoteAddr = r.RemoteAddr
	rec := newRecorder()
	m.next.ServeHTTP(rec, req)
	return rec
}

// harmless turns r into a GET of its own URL without query, so that the
// handler changes nothing while a plan writes the answer.
func harmless(r *http.Request) *http.Request {
	r.Method = http.MethodGet
	r.Body = http.NoBody
	r.ContentLength = 0
	r.Header.Del("Content-Length")
	r.Header.Set("Accept", "application/json")
	r.URL.RawQuery = ""
	r.RequestURI = r.URL.RequestURI()
	return r
}

// peekBody reads r's body and puts it back.
func peekBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

func bodyName(r *http.Request) string {
	var o struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(peekBody(r), &o)
	return o.Metadata.Name
}

// replace makes rec the answer o.
func (rec *recorder) replace(o *recorder) {
	rec.header, rec.code = o.header, o.code
	rec.body.Reset()
	rec.body.Write(o.body.Bytes())
}

// jsonField is the string at a path of a JSON answer ("" when absent).
func jsonField(rec *recorder, path ...string) string {
	var v any
	if json.Unmarshal(rec.body.Bytes(), &v) != nil {
		return ""
	}
	for _, p := range path {
		o, _ := v.(map[string]any)
		v = o[p]
	}
	s, _ := v.(string)
	return s
}

// routeNotFound says whether rec is kube-apiserver's 404 for a URL it does
// not serve (no details), as opposed to an object that does not exist.
func routeNotFound(rec *recorder) bool {
	if rec.code != http.StatusNotFound {
		return false
	}
	var st struct{ Details map[string]any }
	return json.Unmarshal(rec.body.Bytes(), &st) == nil && len(st.Details) == 0
}

// onlyCause says whether every cause of a Status answer is on field with reason.
func onlyCause(rec *recorder, field, reason string) bool {
	var st struct {
		Details struct {
			Causes []struct{ Field, Reason string }
		}
	}
	if json.Unmarshal(rec.body.Bytes(), &st) != nil || len(st.Details.Causes) == 0 {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Field != field || c.Reason != reason {
			return false
		}
	}
	return true
}

func finalizersOf(rec *recorder) []string {
	var o struct {
		Metadata struct{ Finalizers []string } `json:"metadata"`
	}
	_ = json.Unmarshal(rec.body.Bytes(), &o)
	return o.Metadata.Finalizers
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// normalizeName makes n a DNS subdomain the way a lenient server might.
func normalizeName(n string) string {
	b := []byte(strings.ToLower(n))
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-') {
			b[i] = '-'
		}
	}
	out := string(b)
	if len(out) > validation.DNS1123SubdomainMaxLength {
		out = out[:validation.DNS1123SubdomainMaxLength]
	}
	out = strings.Trim(out, "-.")
	if out == "" {
		out = "x"
	}
	return out
}

// dropReplaceDirectives removes every "$patch": "replace" of a map.
func dropReplaceDirectives(o map[string]any) {
	if o["$patch"] == "replace" {
		delete(o, "$patch")
	}
	for _, v := range o {
		if sub, ok := v.(map[string]any); ok {
			dropReplaceDirectives(sub)
		}
	}
}

// pruneTo removes from got the map keys that sent does not have.
func pruneTo(got, sent any) {
	g, ok1 := got.(map[string]any)
	s, ok2 := sent.(map[string]any)
	if !ok1 || !ok2 {
		return
	}
	for k, v := range g {
		if sv, ok := s[k]; ok {
			pruneTo(v, sv)
		} else {
			delete(g, k)
		}
	}
}

// crdSchema is the openAPIV3Schema of the custom resource at a, or nil when
// a is not a custom resource.
func (m *middleware) crdSchema(r *http.Request, a apiPath) map[string]any {
	version := a.prefix[strings.LastIndex(a.prefix, "/")+1:]
	got := m.internal(r, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+a.rest[0]+"."+a.group, nil, nil)
	if got.code != http.StatusOK {
		return nil
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if json.Unmarshal(got.body.Bytes(), &crd) != nil {
		return nil
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

// fillRequired sets every required field of o that schema names and o lacks
// to the zero value of its type, at every level o has.
func fillRequired(o map[string]any, schema map[string]any) {
	props, _ := schema["properties"].(map[string]any)
	req, _ := schema["required"].([]any)
	for _, n := range req {
		name, _ := n.(string)
		ps, ok := props[name].(map[string]any)
		if _, has := o[name]; has || !ok {
			continue
		}
		switch ps["type"] {
		case "integer", "number":
			o[name] = 0
		case "string":
			o[name] = ""
		case "boolean":
			o[name] = false
		case "array":
			o[name] = []any{}
		default:
			o[name] = map[string]any{}
		}
	}
	for k, v := range o {
		if sub, ok := v.(map[string]any); ok {
			if ps, ok := props[k].(map[string]any); ok {
				fillRequired(sub, ps)
			}
		}
	}
}

// schemaConstraints are the schema members SchemaConstraintsIgnored drops:
// every constraint beyond types and required fields.
var schemaConstraints = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum", "pattern",
	"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "format", "allOf", "anyOf", "oneOf", "not"}

// dropConstraints removes schemaConstraints from a schema, at every level.
func dropConstraints(s map[string]any) {
	for _, k := range schemaConstraints {
		delete(s, k)
	}
	props, _ := s["properties"].(map[string]any)
	for _, p := range props {
		if sub, ok := p.(map[string]any); ok {
			dropConstraints(sub)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := s[k].(map[string]any); ok {
			dropConstraints(sub)
		}
	}
}

// firstNull is the path (spec.a.b) of a null object member in v, in key
// order, or "".
func firstNull(v any, path string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if m[k] == nil {
			return p
		}
		if f := firstNull(m[k], p); f != "" {
			return f
		}
	}
	return ""
}
