package fieldcheck

import "testing"

func TestTypeMetaKeysOnce(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"apiVersion":"v1","kind":"ConfigMap"}`, true},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{"apiVersion":"v1","kind":"x"}]}}`, true},
		{`{"a":"kind","b":["apiVersion","kind"],"kind":"X"}`, true},
		{`{"a":"\"kind\"","kind":"X"}`, true},
		{`{"kind":1,"kind":"X"}`, false},
		{`{"apiVersion":"v1","x":{},"apiVersion":"v2"}`, false},
		{`{"\u006bind":1,"kind":"X"}`, false},
		{`{}`, true},
	} {
		if got := typeMetaKeysOnce([]byte(c.data)); got != c.want {
			t.Errorf("%s: %v, want %v", c.data, got, c.want)
		}
	}
}
