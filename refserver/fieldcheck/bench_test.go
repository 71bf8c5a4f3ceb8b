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
