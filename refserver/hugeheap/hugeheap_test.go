package hugeheap

import (
	"strings"
	"testing"
)

func TestThpMode(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never":   "always",
		"always madvise [never]":   "never",
		"":                         "",
		"always madvise never":     "",
		"] [":                      "",
	} {
		if got := thpMode(in); got != want {
			t.Errorf("thpMode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlan(t *testing.T) {
	const gib = 1 << 30
	ok := machine{thp: "always [madvise] never\n", overcommit: "0\n", memTotal: 24 * gib, wordBits: 64}
	with := func(f func(*machine)) machine { m := ok; f(&m); return m }
	cases := []struct {
		name string
		m    machine
		want uint64
		why  string // a word of the reason when want is 0
	}{
		{"madvise mode, plenty of memory", ok, StretchSize, ""},
		{"heuristic overcommit", ok, StretchSize, ""},
		{"always overcommit", with(func(m *machine) { m.overcommit = "1" }), StretchSize, ""},
		{"a quarter of a small machine", with(func(m *machine) { m.memTotal = 2 * gib }), gib / 2, ""},
		{"rounded down to whole 64 MiB", with(func(m *machine) { m.memTotal = 2*gib + 4<<20 }), gib / 2, ""},
		{"too little memory", with(func(m *machine) { m.memTotal = 200 << 20 }), 0, "too little"},
		{"THP always", with(func(m *machine) { m.thp = "[always] madvise never" }), 0, "always on"},
		{"THP never", with(func(m *machine) { m.thp = "always madvise [never]" }), 0, "off"},
		{"no THP", with(func(m *machine) { m.thp = "" }), 0, "no transparent"},
		{"GODEBUG disablethp", with(func(m *machine) { m.godebug = "gctrace=1,disablethp=1" }), 0, "disablethp"},
		{"GODEBUG disablethp=0", with(func(m *machine) { m.godebug = "disablethp=0" }), StretchSize, ""},
		{"strict overcommit", with(func(m *machine) { m.overcommit = "2\n" }), 0, "strict"},
		{"limited address space", with(func(m *machine) { m.addrLimit = 64 * gib }), 0, "RLIMIT_AS"},
		{"32-bit", with(func(m *machine) { m.wordBits = 32 }), 0, "32-bit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := plan(c.m, StretchSize)
			if got != c.want {
				t.Fatalf("plan = %d (%q), want %d", got, why, c.want)
			}
			if (got == 0) != (why != "") || !strings.Contains(why, c.why) {
				t.Fatalf("reason %q, want one containing %q", why, c.why)
			}
		})
	}
}

func TestLift(t *testing.T) {
	const huge, end = 2 << 20, 64 << 20
	for _, c := range []struct {
		boundary, top, want uintptr
	}{
		{0, 0, huge},                        // the first page touched: its huge page leaves the advice
		{0, huge - 4096, huge},              // the last page of the first huge page
		{0, huge, 2 * huge},                 // the first page of the second
		{4 * huge, 4*huge + 8192, 5 * huge}, //
		{6 * huge, 4 * huge, 6 * huge},      // never lower
		{0, end - 4096, end},                // the whole stretch
		{0, end + huge, end},                // never beyond its end
	} {
		if got := lift(c.boundary, c.top, huge, end); got != c.want {
			t.Errorf("lift(%#x, %#x) = %#x, want %#x", c.boundary, c.top, got, c.want)
		}
	}
}
