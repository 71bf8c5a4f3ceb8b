package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// eventsV1Kind is the strategy of events.k8s.io/v1 Event, as kube-apiserver
// v1.36.3 serves it: core/v1's events (core, the kind they are stored as)
// under the new API's field names, so that an event written through
// either API is read, listed and watched through both. What is written
// through this one must be of the new form (eventTime, a reporting
// controller, no deprecated fields), and only its series may change
// afterwards. kube-apiserver validates both APIs' writes in core's terms,
// so its messages name core's fields (involvedObject, message, count).
//
// The field manager records this API's writes at events.k8s.io/v1; as on
// kube-apiserver, a write through one API drops the other API's entries
// (neither converts to the other's group).
func eventsV1Kind(core *Kind) *Kind {
	regarding := func(f string) func(Object) string {
		return func(o Object) string { return str(mapOf(o["regarding"])[f]) }
	}
	top := func(f string) func(Object) string { return func(o Object) string { return str(o[f]) } }
	k := &Kind{
		Group: "events.k8s.io", Versions: []string{"v1"}, Resource: "events", Singular: "event", Kind: "Event", ListKind: "EventList",
		ShortNames: []string{"ev"}, Namespaced: true, DeleteReturnsStatus: true, CreateOnUpdate: true,
		StrategicMerge: eventsv1.Event{}, Typed: func() any { return &eventsv1.Event{} },
		StoredAs: core, FromStored: eventFromCore, ToStored: eventToCore,
		Validate: validateEventsV1,
		// kube-apiserver's field labels for this API: core's, named as here.
		Fields: map[string]func(Object) string{
			"regarding.kind":            regarding("kind"),
			"regarding.namespace":       regarding("namespace"),
			"regarding.name":            regarding("name"),
			"regarding.uid":             regarding("uid"),
			"regarding.apiVersion":      regarding("apiVersion"),
			"regarding.resourceVersion": regarding("resourceVersion"),
			"regarding.fieldPath":       regarding("fieldPath"),
			"reportingController":       top("reportingController"),
			"reason":                    top("reason"),
			"type":                      top("type"),
		},
	}
	// The same table as core's (kube-apiserver prints both from its
	// internal event): AppendCells reads the cells from the core form.
	k.Columns = core.Columns
	return k
}

// eventToCore converts an events.k8s.io/v1 event to core/v1, field by
// field as kube-apiserver's conversions do, through the Go types so that
// each form carries the zero values its encoding writes.
func eventToCore(obj Object) (Object, error) {
	ev, err := typedCoreEvent(obj)
	if err != nil {
		return nil, err
	}
	return typedObject(ev)
}

// typedCoreEvent is eventToCore's event before its encoding.
func typedCoreEvent(obj Object) (*corev1.Event, error) {
	var in eventsv1.Event
	if err := convertJSON(obj, &in); err != nil {
		return nil, fmt.Errorf("events.k8s.io/v1 event: %w", err)
	}
	out := corev1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: in.ObjectMeta, InvolvedObject: in.Regarding, Reason: in.Reason, Message: in.Note,
		Source: in.DeprecatedSource, FirstTimestamp: in.DeprecatedFirstTimestamp, LastTimestamp: in.DeprecatedLastTimestamp,
		Count: in.DeprecatedCount, Type: in.Type, EventTime: in.EventTime, Action: in.Action, Related: in.Related,
		ReportingController: in.ReportingController, ReportingInstance: in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return &out, nil
}

// eventFromCore is eventToCore's inverse.
func eventFromCore(obj Object) (Object, error) {
	var in corev1.Event
	if err := convertJSON(obj, &in); err != nil {
		return nil, fmt.Errorf("core/v1 event: %w", err)
	}
	out := eventsv1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: in.ObjectMeta, EventTime: in.EventTime, ReportingController: in.ReportingController,
		ReportingInstance: in.ReportingInstance, Action: in.Action, Reason: in.Reason, Regarding: in.InvolvedObject,
		Related: in.Related, Note: in.Message, Type: in.Type, DeprecatedSource: in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp, DeprecatedLastTimestamp: in.LastTimestamp, DeprecatedCount: in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return typedObject(&out)
}

// typedObject is a Go value as an Object, as decoding its JSON gives it.
func typedObject(v any) (Object, error) {
	var obj Object
	err := convertJSON(v, &obj)
	return obj, err
}

// validateEventsV1 is kube-apiserver's validation of an event written
// through events.k8s.io/v1: core's (validateEvent), then the new API's
// stricter rules, in core's field names.
func validateEventsV1(obj, old Object) field.ErrorList {
	ev, err := typedCoreEvent(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	stored, err := typedObject(ev)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := validateEvent(stored)
	if old == nil {
		return append(errs, validateNewEvent(ev)...)
	}
	was, err := typedCoreEvent(old)
	if err != nil {
		return append(errs, field.InternalError(nil, err))
	}
	return append(errs, validateEventChange(ev, was)...)
}

// validateNewEvent: what kube-apiserver requires of an event created
// through events.k8s.io/v1 beyond core's rules.
func validateNewEvent(ev *corev1.Event) field.ErrorList {
	errs := validateEventSeries(ev)
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", "has invalid value: "+ev.Type))
	}
	unset := func(name string, set bool) {
		if set {
			errs = append(errs, field.Invalid(field.NewPath(name), "", "needs to be unset"))
		}
	}
	unset("firstTimestamp", !ev.FirstTimestamp.IsZero())
	unset("lastTimestamp", !ev.LastTimestamp.IsZero())
	unset("count", ev.Count != 0)
	unset("source", ev.Source.Component != "" || ev.Source.Host != "")
	return errs
}

func validateEventSeries(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if ev.Series != nil {
		if ev.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
		}
		if ev.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
		}
	}
	return errs
}

// validateEventChange: an update through events.k8s.io/v1 may change the
// series (which must then be whole) and nothing else of the event's own.
// kube-apiserver shows the values it compares in its internal types (an
// object reference as {"Kind":…}), and checks the reason twice.
func validateEventChange(ev, old *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(ev.Series, old.Series) {
		errs = append(errs, validateEventSeries(ev)...)
	}
	for _, f := range []struct {
		name     string
		now, was any
	}{
		{"involvedObject", internalReference(ev.InvolvedObject), internalReference(old.InvolvedObject)},
		{"reason", ev.Reason, old.Reason},
		{"message", ev.Message, old.Message},
		{"source", internalSource(ev.Source), internalSource(old.Source)},
		{"firstTimestamp", ev.FirstTimestamp, old.FirstTimestamp},
		{"lastTimestamp", ev.LastTimestamp, old.LastTimestamp},
		{"count", ev.Count, old.Count},
		{"reason", ev.Reason, old.Reason},
		{"type", ev.Type, old.Type},
		{"eventTime", ev.EventTime, old.EventTime},
		{"action", ev.Action, old.Action},
		{"related", internalReferenceOf(ev.Related), internalReferenceOf(old.Related)},
		{"reportingController", ev.ReportingController, old.ReportingController},
		{"reportingInstance", ev.ReportingInstance, old.ReportingInstance},
	} {
		if !apiequality.Semantic.DeepEqual(f.now, f.was) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), f.now, "field is immutable"))
		}
	}
	return errs
}

// internalObjectReference and internalEventSource have the fields of
// kube-apiserver's internal types, without JSON names, as its messages
// print them.
type internalObjectReference struct {
	Kind, Namespace, Name string
	UID                   types.UID
	APIVersion            string
	ResourceVersion       string
	FieldPath             string
}

type internalEventSource struct{ Component, Host string }

func internalReference(r corev1.ObjectReference) internalObjectReference {
	return internalObjectReference{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: r.UID,
		APIVersion: r.APIVersion, ResourceVersion: r.ResourceVersion, FieldPath: r.FieldPath}
}

func internalReferenceOf(r *corev1.ObjectReference) *internalObjectReference {
	if r == nil {
		return nil
	}
	ref := internalReference(*r)
	return &ref
}

func internalSource(s corev1.EventSource) internalEventSource {
	return internalEventSource{Component: s.Component, Host: s.Host}
}
