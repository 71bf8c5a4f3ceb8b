package fieldcheck

import (
	"strings"
	"testing"
)

var loadCreateBody = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001","labels":{"load":"apiconform","shard":"1"}},"data":{"index":"1","payload":"` + strings.Repeat("p", 600) + `"}}`

func BenchmarkDecode(b *testing.B) {
	bodies := map[string]struct {
		d    Decoder
		body string
	}{
		"typed": {configMaps(b), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","labels":{"a":"b"}},"data":{"a":"b","c":"d"},"bogus":1}`},
		// The load's create body and a served object (a PUT body): the fast check answers them.
		"typed-create": {configMaps(b), loadCreateBody},
		"typed-served": {configMaps(b), served},
		"schema":       {widgets(b), `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"items":[{"a":"x","b":1}],"nested":{"inner":{"x":"1"}},"bar":1}}`},
	}
	for name, bc := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := bc.d.Decode([]byte(bc.body), JSON, Warn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeApply: an apply body as loadgen sends it (JSON is YAML).
func BenchmarkDecodeApply(b *testing.B) {
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001","labels":{"shard":"1"}},"data":{"applied":"1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeApply(body, Warn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodePatched: a merge patch of the load and the object it made.
func BenchmarkDecodePatched(b *testing.B) {
	d := configMaps(b)
	patch := []byte(`{"data":{"patched":"1"}}`)
	patched := []byte(strings.Replace(served, `"data":{`, `"data":{"patched":"1",`, 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, w, err := d.DecodePatched(MergePatch, patch, patched, Warn); err != nil || len(w) > 0 {
			b.Fatal(err, w)
		}
	}
}

// BenchmarkTypedFastCheck: the fast check alone on a served object (the
// parse it follows is not counted).
func BenchmarkTypedFastCheck(b *testing.B) {
	d := configMaps(b)
	body := []byte(served)
	obj, h, err := d.parse(body, body)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !typedFast(body, obj, h, d.Schema.goType) {
			b.Fatal("declined")
		}
	}
}
