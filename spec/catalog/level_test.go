package catalog

import "testing"

func TestLevelOrder(t *testing.T) {
	tests := []struct {
		l, m Level
		want bool
	}{
		{Must, Must, true}, {Must, Should, true}, {Must, May, true},
		{Should, Must, false}, {Should, Should, true}, {Should, May, true},
		{May, Must, false}, {May, Should, false}, {May, May, true},
		{"", May, false}, {"OFTEN", May, false}, {May, "", true},
	}
	for _, tt := range tests {
		if got := tt.l.AtLeast(tt.m); got != tt.want {
			t.Errorf("%q.AtLeast(%q) = %v, want %v", tt.l, tt.m, got, tt.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"must": Must, " Should ": Should, "MAY": May, "": May} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLevel("often"); err == nil {
		t.Error(`ParseLevel("often") = nil error`)
	}
}
