package offsets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenFileMissingIsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Entries(); len(got) != 0 {
		t.Fatalf("entries %q", got)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenFile created the file: %v", err)
	}
}

func TestOpenFileCorruptNamesFileAndProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	data, _ := readFixture(t, "one")
	if err := os.WriteFile(path, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFile(path)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "byte array length") {
		t.Fatalf("error %v, want a FormatError naming %s and the truncation", err, path)
	}
}

func TestFileStoreReadsJavaFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	data, _ := readFixture(t, "null-value")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Get([]byte(`["inventory",{"server":"kept"}]`)); !ok || string(v) != `{"lsn":1}` {
		t.Fatalf("kept: %q %v", v, ok)
	}
	if v, ok := s.Get([]byte(`["inventory",{"server":"reset"}]`)); ok {
		t.Fatalf("tombstone read as %q", v)
	}
	if got := len(s.Entries()); got != 2 {
		t.Fatalf("%d entries, want 2 with the tombstone", got)
	}
}

func TestFileStorePutPersistsAndReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offsets.dat")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Entry{{Key: []byte("b"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("2")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Entry{{Key: []byte("b"), Value: []byte("3")}, {Key: []byte("a"), Value: nil}}); err != nil {
		t.Fatal(err)
	}
	reopened, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "61 null\n62 33\n" // sorted by key, tombstone kept
	if got := formatEntries(reopened.Entries()); got != want {
		t.Fatalf("reopened entries\n%s\nwant\n%s", got, want)
	}
	if v, ok := reopened.Get([]byte("b")); !ok || string(v) != "3" {
		t.Fatalf("b = %q %v", v, ok)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("directory holds %v; temporary files left behind", names)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v, want 0644", info.Mode().Perm())
	}
}

func TestFileStorePutKeepsFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	data, err := appendMap(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Entry{{Key: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", info.Mode().Perm())
	}
}

func TestFileStorePutFailureLeavesStoreUnchanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offsets.dat")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Entry{{Key: []byte("k"), Value: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory in the file's place makes the rename fail, even
	// for root.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = s.Put([]Entry{{Key: []byte("k"), Value: []byte("new")}})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s", err, path)
	}
	if v, _ := s.Get([]byte("k")); string(v) != "old" {
		t.Fatalf("store shows %q after a failed Put", v)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("directory holds %v; the temporary file was left behind", names)
	}
}

func TestFileStorePutRejectsNilKey(t *testing.T) {
	s, err := OpenFile(filepath.Join(t.TempDir(), "offsets.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Entry{{Key: nil, Value: []byte("v")}}); err == nil {
		t.Fatal("nil key stored")
	}
}

// TestFileStoreConcurrentPuts runs Puts and reads together (meaningful under
// -race) and checks that no write is lost.
func TestFileStoreConcurrentPuts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				key := fmt.Appendf(nil, "w%d-%d", w, i)
				if err := s.Put([]Entry{{Key: key, Value: []byte("v")}}); err != nil {
					t.Error(err)
					return
				}
				if _, ok := s.Get(key); !ok {
					t.Errorf("%s missing right after its Put", key)
				}
				_ = s.Entries()
			}
		}()
	}
	wg.Wait()
	reopened, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(reopened.Entries()); got != 40 {
		t.Fatalf("%d entries on disk, want 40", got)
	}
}

func TestFileStoreReturnsCopies(t *testing.T) {
	s, err := OpenFile(filepath.Join(t.TempDir(), "offsets.dat"))
	if err != nil {
		t.Fatal(err)
	}
	value := []byte("v")
	if err := s.Put([]Entry{{Key: []byte("k"), Value: value}}); err != nil {
		t.Fatal(err)
	}
	value[0] = 'x'
	got, _ := s.Get([]byte("k"))
	got[0] = 'y'
	if again, _ := s.Get([]byte("k")); string(again) != "v" {
		t.Fatalf("stored value changed to %q through a caller's slice", again)
	}
}
