package jsonvalue

// The scanners over JSON text (the parser's strings, the encoder's, the
// field checker's passes over a body) spend most of their bytes inside long
// string values: a configmap's data, an annotation holding a last-applied
// configuration. PlainRun and EncodeRun let them skip the bytes that need no
// attention eight at a time instead of one at a time; what ends a run, they
// then look at byte by byte as before.

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// word is the 8 bytes of s at i, the first in the lowest bits (one load:
// the compiler merges the bytes' loads once the slice proves them there).
func word[T string | []byte](s T, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// outsidePrintable is non-zero when a byte of w is not printable ASCII:
// below 0x20 or from 0x7f up. Where none is, no byte borrows or carries
// into the next, so each term is exact until the first such byte.
func outsidePrintable(w uint64) uint64 {
	return ((w - lowBits*0x20) | (w + lowBits) | w) & highBits
}

// zeroByte is non-zero when a byte of x is zero; x is w with the bytes
// sought turned to zero (w ^ c for one byte c; (w | m) ^ c for the two
// bytes that differ from c only in m's bit).
func zeroByte(x uint64) uint64 {
	return (x - lowBits) &^ x & highBits
}

// PlainRun is how many bytes at the start of s are printable ASCII (0x20
// to 0x7e) other than '"' and '\\': what a JSON string holds as it is and
// every scanner passes over. It looks at whole words of 8 bytes, so it may
// stop up to 7 bytes short of the first other byte.
func PlainRun[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		if outsidePrintable(w)|zeroByte(w^lowBits*'"')|zeroByte(w^lowBits*'\\') != 0 {
			break
		}
	}
	return i
}

// EncodeRun is PlainRun for what AppendString writes as it is, which is
// also not '<', '>' or '&' (it escapes them).
func EncodeRun[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		quoteOrAmp := zeroByte((w | lowBits*0x04) ^ lowBits*'&') // '"' is '&' less bit 2
		angle := zeroByte((w | lowBits*0x02) ^ lowBits*'>')      // '<' is '>' less bit 1
		if outsidePrintable(w)|quoteOrAmp|angle|zeroByte(w^lowBits*'\\') != 0 {
			break
		}
	}
	return i
}
