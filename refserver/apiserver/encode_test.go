package apiserver

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// marshalOrderedReference is compact marshalOrdered written with
// json.Marshal field by field: what appendOrdered must give.
func marshalOrderedReference(m map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("{")
	first := true
	write := func(k string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if !first {
			buf.WriteString(",")
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteString(":")
		buf.Write(b)
		return nil
	}
	var rest []string
	for k := range m {
		if k != "kind" && k != "apiVersion" && k != "metadata" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range append([]string{"kind", "apiVersion", "metadata"}, rest...) {
		if v, ok := m[k]; ok {
			if err := write(k, v); err != nil {
				return nil, err
			}
		}
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

func TestCompactEncodingIsJSONMarshal(t *testing.T) {
	for _, m := range []map[string]any{
		{},
		{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"name": "a<b>&", "labels": map[string]any{"x": "y"}}, "data": map[string]any{"k": "v\u2028"}, "b": 1.5, "a": int64(7)},
		{"zeta": []any{1e21, 1e-7, nil, true}, "metadata": map[string]any{}, "status": metav1.Status{Message: "typed"}},
		{"bad": math.NaN()},
	} {
		want, wantErr := marshalOrderedReference(m)
		got, err := marshalOrdered(m, false)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("marshalOrdered %s, %v\nreference %s, %v", got, err, want, wantErr)
		}
	}
	for _, ev := range []watchEvent{
		{Type: "ADDED", Object: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}},
		{Type: "ERROR", Object: metav1.Status{Status: "Failure", Code: 410}},
		{Type: "BOOKMARK", Object: nil},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(ev); err != nil {
			t.Fatal(err)
		}
		got, err := appendWatchEvent(nil, ev)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("watch event %s, %v; json.Encoder %s", got, err, want.Bytes())
		}
	}
}
