package openapi

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Level is how serious a finding is.
type Level int

// Levels in increasing order; --fail-on takes their names.
const (
	Info Level = iota
	Warning
	Breaking
)

func (l Level) String() string {
	switch l {
	case Breaking:
		return "error"
	case Warning:
		return "warning"
	default:
		return "info"
	}
}

// MarshalText writes the level's name in JSON output.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// ParseLevel reads a --fail-on value.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(s) {
	case "error", "breaking", "err":
		return Breaking, nil
	case "warning", "warn":
		return Warning, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown level %q (want error, warning or info)", s)
}

// Rule is one checked statement of a document.
type Rule struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Source names the document and section, e.g. "Changing the API § On compatibility".
	Source string `json:"source"`
	// Statement paraphrases the sentence of the document the rule enforces.
	Statement string `json:"statement"`
	// AppliesTo says what the rule checks ("arrays in API objects", "CRD schemas").
	AppliesTo string `json:"appliesTo,omitempty"`
}

// Finding is one rule violated at one schema location, reported once however
// many operations reach it.
type Finding struct {
	Rule       string `json:"rule"`
	Level      Level  `json:"level"`
	Definition string `json:"definition"`
	// Pointer is the JSON pointer inside the definition ("" for the definition itself).
	Pointer string `json:"pointer"`
	Message string `json:"message"`
	// Note explains a level that differs from the rule's (status field, alpha version).
	Note       string   `json:"note,omitempty"`
	Kinds      []string `json:"kinds,omitempty"`
	Operations []string `json:"operations,omitempty"`
}

// Location is "definition#pointer", the string --ignore paths match.
func (f Finding) Location() string {
	if f.Pointer == "" {
		return f.Definition
	}
	return f.Definition + "#" + f.Pointer
}

// Report is what a checker returns and the renderers show.
type Report struct {
	Tool     string    `json:"tool"`
	Inputs   []string  `json:"inputs"`
	Rules    []Rule    `json:"rules"`
	Findings []Finding `json:"findings"`
	// Ignored counts findings dropped by --ignore or the exceptions file.
	Ignored int `json:"ignored"`
}

// Sort orders findings by level (worst first), then location and rule.
func (r *Report) Sort() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Level != b.Level {
			return a.Level > b.Level
		}
		if a.Definition != b.Definition {
			return a.Definition < b.Definition
		}
		if a.Pointer != b.Pointer {
			return a.Pointer < b.Pointer
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

// CountAtLeast counts findings at or above level.
func (r *Report) CountAtLeast(level Level) int {
	n := 0
	for _, f := range r.Findings {
		if f.Level >= level {
			n++
		}
	}
	return n
}

// RuleByID finds a rule of the report.
func (r *Report) RuleByID(id string) (Rule, bool) {
	for _, rule := range r.Rules {
		if rule.ID == id {
			return rule, true
		}
	}
	return Rule{}, false
}

// Exception accepts findings of a rule, optionally only at matching locations.
// Path is a glob ('*' matches any run of characters) against the definition, or
// against "definition#pointer" when it contains '#'.
type Exception struct {
	Rule string
	Path string
}

// ParseException reads "RULE[:PATH]"; RULE may be "*".
func ParseException(s string) (Exception, error) {
	s = strings.TrimSpace(s)
	rule, path, _ := strings.Cut(s, ":")
	if rule == "" {
		return Exception{}, fmt.Errorf("exception %q: want RULE[:PATH]", s)
	}
	return Exception{Rule: rule, Path: path}, nil
}

// Matches reports whether the exception accepts f.
func (e Exception) Matches(f Finding) bool {
	if e.Rule != "*" && e.Rule != f.Rule {
		return false
	}
	if e.Path == "" {
		return true
	}
	if strings.Contains(e.Path, "#") {
		return globMatch(e.Path, f.Location())
	}
	return globMatch(e.Path, f.Definition)
}

// LoadExceptions reads an exceptions file: one RULE[:PATH] per line; '#' at the
// start of a line, or after whitespace, begins a comment.
func LoadExceptions(path string) ([]Exception, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read exceptions: %w", err)
	}
	defer f.Close()
	var out []Exception
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.Index(text, " #"); i >= 0 {
			text = text[:i]
		}
		if i := strings.Index(text, "\t#"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, err := ParseException(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read exceptions: %w", err)
	}
	return out, nil
}

// ExceptionLine writes the exception that accepts exactly f, for a baseline file.
func ExceptionLine(f Finding) string {
	return f.Rule + ":" + f.Location()
}

// Apply drops accepted findings and counts them.
func (r *Report) Apply(exceptions []Exception) {
	if len(exceptions) == 0 {
		return
	}
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		accepted := false
		for _, e := range exceptions {
			if e.Matches(f) {
				accepted = true
				break
			}
		}
		if accepted {
			r.Ignored++
			continue
		}
		kept = append(kept, f)
	}
	r.Findings = kept
}

// globMatch matches '*' against any run of characters (including '/').
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
