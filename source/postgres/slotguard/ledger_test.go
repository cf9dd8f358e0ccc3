package slotguard

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustOpenLedger(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// inventoryLedger is a ledger file, alone in a new directory, that records slot inv and publication inv_pub
// created on db:5432 for connector inventory.
func inventoryLedger(t *testing.T) (l *Ledger, path string) {
	t.Helper()
	path = LedgerPath(filepath.Join(t.TempDir(), "offsets.dat"))
	l = mustOpenLedger(t, path)
	if err := l.RecordCreated("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordPublication("db:5432", "app", "inv_pub", "inventory"); err != nil {
		t.Fatal(err)
	}
	return l, path
}

func TestLedgerSurvivesReopenAndKeepsCreatedMark(t *testing.T) {
	l, path := inventoryLedger(t)
	if err := l.recordUsed("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := l.recordUsed("db:5432", "app", "seen", "other"); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpenLedger(t, path)
	if r, ok := l2.Slot("db:5432", "inv"); !ok || !r.CreatedByCDCD || r.Connector != "inventory" {
		t.Errorf("created slot after reopen: %+v %v", r, ok)
	}
	if r, ok := l2.Slot("db:5432", "seen"); !ok || r.CreatedByCDCD {
		t.Errorf("seen slot after reopen: %+v %v", r, ok)
	}
	if _, ok := l2.Slot("other:5432", "inv"); ok {
		t.Error("a record of one server matched another")
	}
	if p := l2.Publications("db:5432", "app", "inventory"); len(p) != 1 || p[0].Publication != "inv_pub" {
		t.Errorf("publications %+v", p)
	}
	if err := l2.forgetSlot("db:5432", "inv"); err != nil {
		t.Fatal(err)
	}
	l3, _ := OpenLedger(path)
	if _, ok := l3.Slot("db:5432", "inv"); ok {
		t.Error("forgotten slot came back after reopen")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestCorruptLedgerIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.slots.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("corrupt ledger: %v", err)
	}
}

// A save that fails leaves the ledger as it was: what it holds is what the file holds, and a later change
// is not mistaken for one already recorded.
func TestLedgerFailedSaveLeavesItUnchanged(t *testing.T) {
	l, path := inventoryLedger(t)
	saved := ledgerDoc{Slots: slices.Clone(l.doc.Slots), Publications: slices.Clone(l.doc.Publications)}
	// A non-empty directory in the file's place makes every save fail, even for root.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	changes := []struct {
		name   string
		change func() error
	}{
		{"RecordCreated", func() error { return l.RecordCreated("db:5432", "app", "new", "other") }},
		{"recordUsed", func() error { return l.recordUsed("db:5432", "app", "inv", "renamed") }},
		{"RecordPublication", func() error { return l.RecordPublication("db:5432", "app", "new_pub", "other") }},
		{"forgetSlot", func() error { return l.forgetSlot("db:5432", "inv") }},
		{"forgetPublication", func() error { return l.forgetPublication(saved.Publications[0]) }},
	}
	for _, c := range changes {
		if err := c.change(); err == nil {
			t.Fatalf("%s: saved in place of a directory", c.name)
		}
		if !reflect.DeepEqual(l.doc, saved) {
			t.Fatalf("%s changed the ledger although the save failed:\n%+v\nwant\n%+v", c.name, l.doc, saved)
		}
	}
	// Once the file can be written again, the same change is recorded rather than taken as known.
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := l.recordUsed("db:5432", "app", "inv", "renamed"); err != nil {
		t.Fatal(err)
	}
	if r, ok := mustOpenLedger(t, path).Slot("db:5432", "inv"); !ok || r.Connector != "renamed" || !r.CreatedByCDCD {
		t.Errorf("after the retry the file holds %+v %v", r, ok)
	}
}
