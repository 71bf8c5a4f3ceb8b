package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/catalog"
)

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	defer rootCmd.SetOut(nil)
	if code := execute([]string{"version"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	want := fmt.Sprintf("catalogue: %d requirements", len(catalog.All()))
	if !strings.HasPrefix(out.String(), "apiconform ") || !strings.Contains(out.String(), want) {
		t.Fatalf("version output:\n%s", out.String())
	}
	if code := execute([]string{"version", "extra"}); code != exitUsage {
		t.Fatalf("version with an argument: exit %d, want %d", code, exitUsage)
	}
}
