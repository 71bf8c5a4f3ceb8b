package fieldcheck

import "testing"

func BenchmarkDecode(b *testing.B) {
	bodies := map[string]struct {
		d    Decoder
		body string
	}{
		"typed":  {configMaps(b), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","labels":{"a":"b"}},"data":{"a":"b","c":"d"},"bogus":1}`},
		"schema": {widgets(b), `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"items":[{"a":"x","b":1}],"nested":{"inner":{"x":"1"}},"bar":1}}`},
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
