package registry

import (
	"reflect"
	"testing"
)

func TestWithPropagation(t *testing.T) {
	fs := func(s ...string) []any {
		if len(s) == 0 {
			return nil
		}
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	cases := []struct {
		policy string
		in     []any
		want   []any
	}{
		{"", fs("a.io/x"), fs("a.io/x")},
		{"", nil, nil},
		{"Foreground", nil, fs("foregroundDeletion")},
		{"Foreground", fs("a.io/x"), fs("a.io/x", "foregroundDeletion")},
		{"Foreground", fs("orphan", "a.io/x"), fs("a.io/x", "foregroundDeletion")},
		{"Foreground", fs("foregroundDeletion"), fs("foregroundDeletion")},
		{"Orphan", fs("foregroundDeletion", "a.io/x"), fs("a.io/x", "orphan")},
		{"Orphan", nil, fs("orphan")},
		{"Background", fs("orphan", "a.io/x", "foregroundDeletion"), fs("a.io/x")},
		{"Background", nil, nil},
	}
	for _, c := range cases {
		if got := withPropagation(c.in, c.policy); !reflect.DeepEqual(got, c.want) {
			t.Errorf("withPropagation(%v, %q) = %v, want %v", c.in, c.policy, got, c.want)
		}
	}
}

func TestNewFinalizers(t *testing.T) {
	cases := []struct {
		cur, old any
		want     []string
	}{
		{[]any{"a", "b"}, []any{"a"}, []string{"b"}},
		{[]any{"b", "a"}, []any{"a", "b"}, nil},
		{[]any{"a"}, []any{"a", "b"}, nil},
		{nil, []any{"a"}, nil},
		{[]any{"a"}, nil, []string{"a"}},
	}
	for _, c := range cases {
		if got := newFinalizers(c.cur, c.old); !reflect.DeepEqual(got, c.want) {
			t.Errorf("newFinalizers(%v, %v) = %v, want %v", c.cur, c.old, got, c.want)
		}
	}
}
