package jsonvalue

import (
	"encoding/json"
	"strings"
	"testing"
)

// plainByte and encodeByte are the runs' rules a byte at a time.
func plainByte(c byte) bool  { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' }
func encodeByte(c byte) bool { return plainByte(c) && c != '<' && c != '>' && c != '&' }

// checkRun holds a run's length to its rule: every byte before it passes,
// and it stops short of the first byte that does not by less than a word.
func checkRun(t *testing.T, name string, s string, got int, pass func(byte) bool) {
	t.Helper()
	first := len(s)
	for i := 0; i < len(s); i++ {
		if !pass(s[i]) {
			first = i
			break
		}
	}
	if got > first || got < first-7 || got%8 != 0 {
		t.Fatalf("%s(%q) = %d; the first byte it must stop at is at %d", name, s, got, first)
	}
}

// TestRuns puts every byte value at every place of a 24-byte string of
// plain bytes, the way it would end a run of a word's first, middle or
// last byte, and after another byte that ends one.
func TestRuns(t *testing.T) {
	base := strings.Repeat("abcdefgh", 3)
	for c := 0; c < 256; c++ {
		for at := 0; at < len(base); at++ {
			for _, before := range []int{-1, 0x7f} {
				b := []byte(base)
				b[at] = byte(c)
				if before >= 0 && at > 0 {
					b[at-1] = byte(before)
				}
				s := string(b)
				checkRun(t, "PlainRun", s, PlainRun(s), plainByte)
				checkRun(t, "PlainRun", s, PlainRun(b), plainByte)
				checkRun(t, "EncodeRun", s, EncodeRun(s), encodeByte)
			}
		}
	}
	for _, s := range []string{"", "a", "abcdefg", "abcdefgh", "abcdefghi", strings.Repeat("p", 600)} {
		checkRun(t, "PlainRun", s, PlainRun(s), plainByte)
		checkRun(t, "EncodeRun", s, EncodeRun(s), encodeByte)
	}
}

// TestRunsStopAtTheFirst: a run never passes a byte that ends it, whatever
// bytes follow in its word (the bit tricks may flag bytes after the first
// wrongly, never miss one).
func TestRunsStopAtTheFirst(t *testing.T) {
	for c := 0; c < 256; c++ {
		for d := 0; d < 256; d++ {
			s := "abcdefgh" + string([]byte{'x', byte(c), byte(d), 'y', 'z', 'w', 'v', 'u'}) + "abcdefgh"
			checkRun(t, "PlainRun", s, PlainRun(s), plainByte)
			checkRun(t, "EncodeRun", s, EncodeRun(s), encodeByte)
		}
	}
}

func FuzzRuns(f *testing.F) {
	f.Add("abcdefgh\x1fijklmnop")
	f.Add(strings.Repeat("é", 9))
	f.Fuzz(func(t *testing.T, s string) {
		checkRun(t, "PlainRun", s, PlainRun(s), plainByte)
		checkRun(t, "EncodeRun", s, EncodeRun(s), encodeByte)
	})
}

// appendStringCases put each byte AppendString escapes, and runes it
// replaces, after and between runs longer than a word.
func appendStringCases() []string {
	run := strings.Repeat("plain-ru", 2) + "n"
	cases := []string{"", "a", run, run + run}
	for _, special := range []string{"\"", "\\", "<", ">", "&", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "\xe2\x80"} {
		cases = append(cases, special+run, run+special, run+special+run, run+special+special+run, special)
	}
	return cases
}

func TestAppendStringMatchesLibrary(t *testing.T) {
	for _, s := range appendStringCases() {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

func BenchmarkAppendStringLong(b *testing.B) {
	s := strings.Repeat("p", 600)
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

func BenchmarkParseLongString(b *testing.B) {
	data := []byte(`{"data":{"payload":"` + strings.Repeat("p", 600) + `"}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Parse(data, Float64); !ok {
			b.Fatal("not parsed")
		}
	}
}
