package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// eventKind is the strategy of core/v1 Event, as kube-apiserver v1.36.3
// serves it: what `kubectl describe` and `kubectl events` list (by the
// involved object's field selectors), and what client-go's event recorders
// write. A PUT creates a missing event. Events go their TTL after their
// last write (Kind.TTL, set from --event-ttl as on kube-apiserver).
func eventKind() *Kind {
	doc := corev1.Event{}.SwaggerDoc()
	involved := func(f string) func(Object) string {
		return func(o Object) string { return str(mapOf(o["involvedObject"])[f]) }
	}
	top := func(f string) func(Object) string { return func(o Object) string { return str(o[f]) } }
	return &Kind{
		Group: "", Versions: []string{"v1"}, Resource: "events", Singular: "event", Kind: "Event", ListKind: "EventList",
		ShortNames: []string{"ev"}, Namespaced: true, DeleteReturnsStatus: true, CreateOnUpdate: true,
		StrategicMerge: corev1.Event{}, Typed: func() any { return &corev1.Event{} },
		// Only a path segment's rules: the event strategy checks no name
		// format of its own in v1.
		NameValidation: path.IsValidPathSegmentName,
		Validate:       func(obj, old Object) field.ErrorList { return validateEvent(obj) },
		Fields: map[string]func(Object) string{
			"involvedObject.kind":            involved("kind"),
			"involvedObject.namespace":       involved("namespace"),
			"involvedObject.name":            involved("name"),
			"involvedObject.uid":             involved("uid"),
			"involvedObject.apiVersion":      involved("apiVersion"),
			"involvedObject.resourceVersion": involved("resourceVersion"),
			"involvedObject.fieldPath":       involved("fieldPath"),
			"reason":                         top("reason"),
			"reportingComponent":             top("reportingComponent"),
			"source":                         eventSource,
			"type":                           top("type"),
		},
		// kube-apiserver's event table: the name comes last, shown wide.
		Columns: []Column{
			{Name: "Last Seen", Type: "string", Description: doc["lastTimestamp"], Cell: func(o Object) any { return eventLastSeen(o) }},
			{Name: "Type", Type: "string", Description: doc["type"], Cell: func(o Object) any { return str(o["type"]) }},
			{Name: "Reason", Type: "string", Description: doc["reason"], Cell: func(o Object) any { return str(o["reason"]) }},
			{Name: "Object", Type: "string", Description: doc["involvedObject"], Cell: func(o Object) any { return eventTarget(o) }},
			{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"],
				Cell: func(o Object) any { return str(mapOf(o["involvedObject"])["fieldPath"]) }},
			{Name: "Source", Type: "string", Priority: 1, Description: doc["source"], Cell: func(o Object) any { return eventSourceColumn(o) }},
			{Name: "Message", Type: "string", Description: doc["message"], Cell: func(o Object) any { return strings.TrimSpace(str(o["message"])) }},
			{Name: "First Seen", Type: "string", Priority: 1, Description: doc["firstTimestamp"], Cell: func(o Object) any { return eventFirstSeen(o) }},
			{Name: "Count", Type: "string", Priority: 1, Description: doc["count"], Cell: func(o Object) any { return eventCount(o) }},
			{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: metav1.ObjectMeta{}.SwaggerDoc()["name"],
				Cell: func(o Object) any { return str(meta(o)["name"]) }},
		},
	}
}

// Lengths kube-apiserver allows an event's fields (pkg/apis/core/validation).
const (
	eventReportingInstanceMax = 128
	eventActionMax            = 128
	eventReasonMax            = 128
	eventNoteMax              = 1024
)

// validateEvent is kube-apiserver's validation of a core/v1 event, on create
// and update alike: an event without eventTime (client-go's record package
// writes these) names its involved object's namespace; one with eventTime
// (the events.k8s.io form) must say who reported it and what happened.
func validateEvent(obj Object) field.ErrorList {
	var errs field.ErrorList
	ns := str(meta(obj)["namespace"])
	involvedNS := str(mapOf(obj["involvedObject"])["namespace"])
	nsPath := field.NewPath("involvedObject", "namespace")
	if str(obj["eventTime"]) == "" {
		if (involvedNS == "" && ns != "" && ns != metav1.NamespaceDefault) || (involvedNS != "" && ns != involvedNS) {
			errs = append(errs, field.Invalid(nsPath, involvedNS, "does not match event.namespace"))
		}
	} else {
		if involvedNS == "" && ns != metav1.NamespaceDefault && ns != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(nsPath, involvedNS, "does not match event.namespace"))
		}
		// core/v1 calls reportingController reportingComponent.
		controller := str(obj["reportingComponent"])
		controllerPath := field.NewPath("reportingComponent")
		if controller == "" {
			errs = append(errs, field.Required(controllerPath, ""))
		}
		for _, msg := range validation.IsQualifiedName(controller) {
			errs = append(errs, field.Invalid(controllerPath, controller, msg))
		}
		for _, f := range []struct {
			name     string
			max      int
			required bool
		}{{"reportingInstance", eventReportingInstanceMax, true}, {"action", eventActionMax, true}, {"reason", eventReasonMax, true}, {"message", eventNoteMax, false}} {
			v := str(obj[f.name])
			if f.required && v == "" {
				errs = append(errs, field.Required(field.NewPath(f.name), ""))
			}
			if len(v) > f.max {
				errs = append(errs, field.Invalid(field.NewPath(f.name), "", fmt.Sprintf("can have at most %v characters", f.max)))
			}
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(ns) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ns, msg))
	}
	return errs
}

// eventSource is the source field selector's value: the component, else
// the reporting controller.
func eventSource(o Object) string {
	if c := str(mapOf(o["source"])["component"]); c != "" {
		return c
	}
	return str(o["reportingComponent"])
}

// The table's cells, as kube-apiserver's event printer computes them.

func eventFirstSeen(o Object) string {
	if ts := str(o["firstTimestamp"]); ts != "" {
		return age(ts)
	}
	return age(str(o["eventTime"])) // "<unknown>" when unset
}

func eventLastSeen(o Object) string {
	if series := mapOf(o["series"]); series != nil {
		return age(str(series["lastObservedTime"]))
	}
	if ts := str(o["lastTimestamp"]); ts != "" {
		return age(ts)
	}
	return eventFirstSeen(o)
}

func eventCount(o Object) int64 {
	if series := mapOf(o["series"]); series != nil {
		return toInt(series["count"])
	}
	if n := toInt(o["count"]); n != 0 {
		return n
	}
	return 1 // a singleton event of the new API has no count
}

func eventTarget(o Object) string {
	ref := mapOf(o["involvedObject"])
	kind := strings.ToLower(str(ref["kind"]))
	if name := str(ref["name"]); name != "" {
		return kind + "/" + name
	}
	return kind
}

func eventSourceColumn(o Object) string {
	src := mapOf(o["source"])
	component, instance := str(src["component"]), str(src["host"])
	if component == "" {
		component = str(o["reportingComponent"])
	}
	if instance == "" {
		instance = str(o["reportingInstance"])
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}
