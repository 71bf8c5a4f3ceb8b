package apiserver

import (
	"encoding/json"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// statusCases are the Statuses the server answers with, and ones that fill
// every field, empty and not, with strings the encoder escapes.
func statusCases() []metav1.Status {
	gr := schema.GroupResource{Resource: "configmaps"}
	invalid := field.ErrorList{
		field.Invalid(field.NewPath("metadata", "name"), "A<b>&\"c\"", "a lowercase RFC 1123 subdomain"),
		field.Required(field.NewPath("data"), ""),
	}
	count, zero := int64(7), int64(0)
	cases := []metav1.Status{
		{}, // every field empty: {"metadata":{}}
		{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: "cm-1", Kind: "configmaps", UID: types.UID("0f3c8c1e-1b2a-4c3d-8e9f-0a1b2c3d4e5f")}},
		{Status: metav1.StatusSuccess, Details: &metav1.StatusDetails{Name: "w", Group: "x.example.com", Kind: "widgets"}},
		{ListMeta: metav1.ListMeta{SelfLink: "/api/v1", ResourceVersion: "12", Continue: "eyJ2Ijoi", RemainingItemCount: &count}},
		{ListMeta: metav1.ListMeta{RemainingItemCount: &zero}},
		{Message: "é\u2028\u2029\x00\x1f\x7f\xff<>&\"\\ and a long plain run of bytes after them"},
		{Details: &metav1.StatusDetails{}},
		{Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{}, {Type: "T"}, {Field: "f"}}}},
	}
	for _, err := range []error{
		apierrors.NewNotFound(gr, "cm-1"),
		apierrors.NewAlreadyExists(gr, "cm-1"),
		apierrors.NewConflict(gr, "cm-1", errors.New("the object has been modified")),
		apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "A<b>", invalid),
		apierrors.NewTooManyRequests("too many requests", 3),
		apierrors.NewResourceExpired("too old resource version: 1 (5)"),
		apierrors.NewTimeoutError("Too large resource version", 1),
		apierrors.NewForbidden(gr, "cm-1", errors.New("denied")),
		apierrors.NewInternalError(errors.New("storage: value fails its checksum")),
		apierrors.NewServerTimeout(gr, "list", 2),
	} {
		cases = append(cases, statusOf(err))
	}
	return cases
}

// sameAsLibrary fails t unless appendStatus writes json.Marshal's bytes of st.
func sameAsLibrary(t *testing.T, st metav1.Status) {
	t.Helper()
	want, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendStatus(nil, &st); string(got) != string(want) {
		t.Fatalf("appendStatus:\n got %s\nwant %s", got, want)
	}
}

func TestAppendStatusMatchesLibrary(t *testing.T) {
	for _, st := range statusCases() {
		sameAsLibrary(t, st)
	}
}

// TestStatusAnswer: the answer writeObject sends for a Status is
// json.Marshal's with kube-apiserver's trailing newline, pretty or not.
func TestStatusAnswer(t *testing.T) {
	st := statusOf(apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "cm-1"))
	for _, pretty := range []bool{false, true} {
		got, err := marshalOrdered(st, pretty)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(st)
		want = append(want, '\n')
		if pretty {
			want, _ = json.MarshalIndent(st, "", "  ")
		}
		if string(got) != string(want) {
			t.Errorf("pretty %v:\n got %q\nwant %q", pretty, got, want)
		}
	}
}

func FuzzAppendStatus(f *testing.F) {
	f.Add("Status", "v1", "12", "Failure", "not found", "NotFound", "cm-1", "", "configmaps", "u", "FieldValueInvalid", "m", "f", int32(404), int32(0), int64(3), true, true)
	f.Add("", "", "", "", "<>&\u2028", "", "\xff", "g", "", "", "", "", "", int32(-1), int32(5), int64(-9), false, false)
	f.Fuzz(func(t *testing.T, kind, apiVersion, rv, status, message, reason, name, group, dkind, uid, ctype, cmsg, cfield string,
		code, retry int32, remaining int64, withDetails, withRemaining bool) {
		st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cfield},
			Status: status, Message: message, Reason: metav1.StatusReason(reason), Code: code}
		if withRemaining {
			st.RemainingItemCount = &remaining
		}
		if withDetails {
			st.Details = &metav1.StatusDetails{Name: name, Group: group, Kind: dkind, UID: types.UID(uid), RetryAfterSeconds: retry,
				Causes: []metav1.StatusCause{{Type: metav1.CauseType(ctype), Message: cmsg, Field: cfield}}}
		}
		sameAsLibrary(t, st)
	})
}

func BenchmarkStatusAnswer(b *testing.B) {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: "cm-00001", Kind: "configmaps", UID: types.UID("0f3c8c1e-1b2a-4c3d-8e9f-0a1b2c3d4e5f")}}
	b.Run("appendStatus", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = marshalOrdered(st, false)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(st)
		}
	})
}
