package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source"
)

// TestVersion: `cdcd version` prints the version events carry, the commit (stamped, else the toolchain's VCS
// stamp, else unknown) and the Go toolchain.
func TestVersion(t *testing.T) {
	var out strings.Builder
	printVersion(&out)
	want := regexp.MustCompile(`^cdcd ` + regexp.QuoteMeta(source.Version) + ` \(commit (?:[0-9a-f]{40}(?:-dirty)?|unknown), go[^)]+\)\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("cdcd version printed %q", out.String())
	}
	defer func(old string) { commit = old }(commit)
	commit = "abc123"
	if got := buildCommit(); got != "abc123" {
		t.Errorf("with -X main.commit=abc123 the commit is %q", got)
	}
}
