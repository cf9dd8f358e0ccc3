package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ArtifactDir is a directory for what a test leaves behind for people to look at (a screenshot, a rendered
// page), kept after the test, unlike t.TempDir: $CDCD_ARTIFACTS/<test>, else $CDCD_E2E_DIR/artifacts/<test>
// (/var/tmp/cdcd-e2e/artifacts/<test>). The test's log names it.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("CDCD_ARTIFACTS")
	if root == "" {
		root = filepath.Join(stateDir(), "artifacts")
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifacts in %s", dir)
	return dir
}
