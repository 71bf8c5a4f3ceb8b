package fieldcheck

import "github.com/apiconform/apiconform/refserver/jsonvalue"

// An apply body is YAML, and kube-apiserver reads it as YAML even when it is
// JSON, as kubectl sends it; the YAML parser is a sixth of an apply's cost.
// decodeApplyJSON reads without it the JSON on which the YAML path provably
// gives the same object (FuzzDecodeApplyOnePass holds it to that path):
//
//   - outside strings only JSON's structure, the words true, false and null,
//     integers of at most 18 digits (YAML and the JSON decoder agree on them
//     as int64; a fraction or exponent may come back from YAML as another
//     number), spaces and newlines (YAML treats tabs and carriage returns
//     apart);
//   - strings of printable ASCII without escapes (YAML's escapes and line
//     breaks are not JSON's);
//   - every key on one line with its colon and at most maxYAMLKeySpan bytes
//     before it (YAML's simple-key rules), none of them "<<" (a merge key);
//   - no duplicate key (the YAML path reports them), at most maxApplyDepth
//     levels deep.
//
// Anything else, ok false, takes the YAML path.
func decodeApplyJSON(body []byte) (map[string]any, bool) {
	keys, ok := yamlSafeJSON(body)
	if !ok {
		return nil, false
	}
	obj, ok := jsonvalue.Parse(body, jsonvalue.PreserveInts)
	if !ok || countKeys(obj) != keys {
		return nil, false // not JSON after all, or a duplicate key
	}
	return obj, true
}

const (
	maxYAMLKeySpan = 1000 // YAML forgets a simple key 1,024 bytes on
	maxApplyDepth  = 100
	maxIntDigits   = 18 // below int64's 19
)

// yamlSafeJSON checks the bytes of body against the subset above and counts
// the keys in it; it does not check JSON's grammar (jsonvalue.Parse does).
func yamlSafeJSON(body []byte) (keys int, ok bool) {
	depth := 0
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case c == ' ' || c == '\n' || c == ',' || c == ':':
			i++
		case c == '{' || c == '[':
			if depth++; depth > maxApplyDepth {
				return 0, false
			}
			i++
		case c == '}' || c == ']':
			depth--
			i++
		case c == '"':
			start := i
			for i += 1 + jsonvalue.PlainRun(body[i+1:]); i < len(body) && body[i] != '"'; i++ {
				if body[i] < 0x20 || body[i] > 0x7e || body[i] == '\\' {
					return 0, false
				}
			}
			if i == len(body) {
				return 0, false
			}
			i++
			colon, sameLine := i, true
			for colon < len(body) && (body[colon] == ' ' || body[colon] == '\n') {
				sameLine = sameLine && body[colon] == ' '
				colon++
			}
			if colon < len(body) && body[colon] == ':' {
				if !sameLine || colon-start > maxYAMLKeySpan || string(body[start+1:i-1]) == "<<" {
					return 0, false
				}
				keys++
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i
			if c == '-' {
				j++
			}
			digits := j
			for j < len(body) && body[j] >= '0' && body[j] <= '9' {
				j++
			}
			if n := j - digits; n == 0 || n > maxIntDigits {
				return 0, false
			}
			i = j // a '.', 'e' or '+' that follows is refused below
		default:
			n := wordLen(body[i:])
			if n == 0 {
				return 0, false
			}
			i += n
		}
	}
	return keys, true
}

// wordLen is the length of the literal b starts with, 0 for none.
func wordLen(b []byte) int {
	for _, w := range []string{"true", "false", "null"} {
		if len(b) >= len(w) && string(b[:len(w)]) == w {
			return len(w)
		}
	}
	return 0
}
