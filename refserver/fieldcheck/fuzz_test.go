package fieldcheck

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecode checks, for any body, that the levels agree with each other and
// that a decoded object is clean: decoding it again finds nothing.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","foo":1},"data":{"a":"b"},"data":{"c":"d"},"spec":{"x":1},"bogus":true}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u","zz":1}],"labels":{"a":"b","a":"c"}}}`,
		`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"size":2,"items":[{"a":"x","b":1}],"free":{"x":{"y":1}}},"top":1}`,
		`{"metadata":{"name":"nk"},"data":{"a":1}}`,
		`{"kind":"Widget","spec":{"nested":{"inner":{"x":"1","y":"2"},"z":1},"keyed":[{"name":"k","q":1}]},"status":{"bad":1}}`,
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\ndata:\n  c: d\n",
		`[]`, `null`, `{`, `"x"`, `{"metadata":"x"}`, `{"spec":[1,2]}`,
	} {
		f.Add([]byte(seed))
	}
	decoders := []Decoder{configMaps(f), widgets(f), {GVK: configMapGVK}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, d := range decoders {
			_, _, _ = d.Decode(body, YAML, Warn) // must not panic
			objI, wI, errI := d.Decode(body, JSON, Ignore)
			objW, wW, errW := d.Decode(body, JSON, Warn)
			_, _, errS := d.Decode(body, JSON, Strict)
			if (errI == nil) != (errW == nil) || len(wI) != 0 {
				t.Fatalf("Ignore %v %q vs Warn %v", errI, wI, errW)
			}
			if errW != nil {
				if errS == nil || errS.Error() != errW.Error() {
					t.Fatalf("Warn failed with %v but Strict with %v", errW, errS)
				}
				continue
			}
			if (errS != nil) != (len(wW) > 0) {
				t.Fatalf("Strict error %v but Warn warnings %q", errS, wW)
			}
			if !reflect.DeepEqual(objI, objW) {
				t.Fatalf("Ignore and Warn objects differ")
			}
			if _, ok := objW["kind"].(string); !ok {
				t.Fatalf("no kind in %v", objW)
			}
			clean, err := json.Marshal(objW)
			if err != nil {
				t.Fatalf("decoded object does not marshal: %v", err)
			}
			if _, w, err := d.Decode(clean, JSON, Strict); err != nil {
				t.Fatalf("decoded object %s fails again: %v (%q)", clean, err, w)
			}
		}
	})
}
