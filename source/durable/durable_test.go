package durable

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names lists dir's entries; a directory that cannot be read lists as its error.
func names(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// perm is the permission bits of the file at path, 0 when it cannot be read.
func perm(path string) os.FileMode {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Mode().Perm()
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := WriteFile(path, []byte("first"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := perm(path); got != 0o640 {
		t.Errorf("new file mode %v, want 0640", got)
	}
	// An existing file keeps its mode, whatever perm says.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "second" {
		t.Errorf("file holds %q, want %q", got, "second")
	}
	if got := perm(path); got != 0o600 {
		t.Errorf("replaced file mode %v, want 0600 kept", got)
	}
	if err := WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || len(got) != 0 {
		t.Errorf("after writing nothing the file holds %q (%v)", got, err)
	}
	if n := names(dir); !slices.Equal(n, []string{"state.json"}) {
		t.Errorf("directory holds %v, want only the file", n)
	}
}

// A rename that fails (here over a non-empty directory, which stops root too) leaves no temporary file.
func TestWriteFileFailureLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("data"), 0o644); err == nil {
		t.Fatal("wrote over a non-empty directory")
	}
	if n := names(dir); !slices.Equal(n, []string{"state.json"}) {
		t.Errorf("directory holds %v, want only what was there", n)
	}
	if n := names(path); !slices.Equal(n, []string{"child"}) {
		t.Errorf("the directory in the file's place holds %v", n)
	}
}

func TestWriteFileWithoutDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "missing", "state.json"), []byte("data"), 0o644); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
	if n := names(dir); len(n) != 0 {
		t.Errorf("directory holds %v, want nothing", n)
	}
}
