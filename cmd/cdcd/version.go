package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/cdcd/cdcd/source"
)

// commit is the git commit the binary was built from. make build and the Dockerfile set it (-ldflags
// "-X main.commit=…"); a plain `go build` in a git checkout leaves it empty, and buildCommit reads the
// toolchain's VCS stamp instead.
var commit string

// buildCommit is commit, else the VCS stamp's revision (with -dirty when the tree had changes), else "unknown"
// (built outside a checkout, as from a module download).
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	revision, dirty := "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if revision == "" {
		return "unknown"
	}
	return revision + dirty
}

// printVersion is `cdcd version`: the version (what source.version carries in every event), the commit
// and the Go toolchain.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "cdcd %s (commit %s, %s)\n", source.Version, buildCommit(), runtime.Version())
}
