package slotguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLedgerSurvivesReopenAndKeepsCreatedMark(t *testing.T) {
	path := LedgerPath(filepath.Join(t.TempDir(), "offsets.dat"))
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RecordCreated("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := l.recordUsed("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := l.recordUsed("db:5432", "app", "seen", "other"); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordPublication("db:5432", "app", "inv_pub", "inventory"); err != nil {
		t.Fatal(err)
	}
	l2, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
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
