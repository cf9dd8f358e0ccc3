package postgres

import (
	"slices"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/signal"
)

func TestParsePgSnapshot(t *testing.T) {
	for _, c := range []struct {
		text string
		want pgSnapshot
	}{
		{"748:748:", pgSnapshot{xmin: 748, xmax: 748}},
		{"10:20:10,15", pgSnapshot{xmin: 10, xmax: 20, xip: []uint64{10, 15}}},
		{"4294967300:4294967310:4294967305", pgSnapshot{xmin: 4294967300, xmax: 4294967310, xip: []uint64{4294967305}}},
	} {
		got, err := parsePgSnapshot(c.text)
		if err != nil || got.xmin != c.want.xmin || got.xmax != c.want.xmax || !slices.Equal(got.xip, c.want.xip) {
			t.Errorf("parsePgSnapshot(%q) = %+v, %v; want %+v", c.text, got, err, c.want)
		}
		if err == nil && got.String() != c.text {
			t.Errorf("%q prints as %q", c.text, got.String())
		}
	}
	for _, bad := range []string{"", "1:2", "1:2:3:4", "a:2:", "1:b:", "1:2:x", "1:2:1,", "5:4:", "10:20:9", "10:20:20", "-1:2:", "1:18446744073709551616:"} {
		if s, err := parsePgSnapshot(bad); err == nil {
			t.Errorf("parsePgSnapshot(%q) = %+v, no error", bad, s)
		} else if !strings.Contains(err.Error(), "pg_current_snapshot()") {
			t.Errorf("parsePgSnapshot(%q): %v does not say what it read", bad, err)
		}
	}
}

func TestSnapshotVisibility(t *testing.T) {
	s := pgSnapshot{xmin: 100, xmax: 110, xip: []uint64{100, 105}}
	for xid, want := range map[uint32]bool{1: true, 99: true, 100: false, 101: true, 105: false, 109: true, 110: false, 200: false} {
		if got := s.visible(xid); got != want {
			t.Errorf("%s: visible(%d) = %v, want %v", s, xid, got, want)
		}
	}
	// pgoutput's 32-bit ids take the epoch nearest the snapshot's: across a wraparound, 2^32-5 is from the
	// epoch before xmax's, 3 from xmax's own.
	wrapped := pgSnapshot{xmin: 1<<32 - 10, xmax: 1<<32 + 5, xip: []uint64{1<<32 - 5, 1<<32 + 3}}
	for xid, want := range map[uint32]bool{1<<32 - 20: true, 1<<32 - 5: false, 1<<32 - 4: true, 2: true, 3: false, 5: false, 6: false} {
		if got := wrapped.visible(xid); got != want {
			t.Errorf("%s: visible(%d) = %v, want %v", wrapped, xid, got, want)
		}
	}
	// An id that would lie before the first epoch is no server's: invisible, so a window opens early.
	if (pgSnapshot{xmin: 3, xmax: 10}).visible(1<<32 - 100) {
		t.Error("an id before the first epoch counts as visible")
	}
}

// TestWatermarkPassing walks a stream past one window's watermarks: it opens at the first transaction the
// low snapshot does not see, not before; it closes at the first the high snapshot does not see, or once
// the stream reaches the high snapshot's WAL position between transactions.
func TestWatermarkPassing(t *testing.T) {
	low := readOnlyWatermark{id: "c-open", kind: signal.OpenWindow, snap: pgSnapshot{xmin: 100, xmax: 103, xip: []uint64{101}}}
	high := readOnlyWatermark{id: "c-close", kind: signal.CloseWindow, snap: pgSnapshot{xmin: 103, xmax: 106, xip: []uint64{104}}, at: 5000}
	ws := []readOnlyWatermark{low, high}
	begin := func(xid uint32) streamPoint { return streamPoint{begin: true, xid: xid} }
	at := func(lsn LSN) streamPoint { return streamPoint{at: lsn} }

	for _, p := range []streamPoint{begin(99), begin(100), begin(102), at(4999), at(0)} {
		if passes(ws, p) {
			t.Errorf("the window opens at %+v, which the low snapshot sees or which is before the close's position", p)
		}
	}
	for _, xid := range []uint32{101, 103, 104, 200} {
		if !passes(ws, begin(xid)) {
			t.Errorf("the window stays shut at transaction %d, which the low snapshot does not see", xid)
		}
	}
	// An idle stream reaching the close's position passes both at once.
	if !passes(ws, at(5000)) || !passes(ws[1:], at(5000)) {
		t.Error("an idle stream at the high watermark's position does not open and close the window")
	}
	open := ws[1:]
	for _, xid := range []uint32{101, 102, 103, 105} {
		if passes(open, begin(xid)) {
			t.Errorf("the window closes at transaction %d, which the high snapshot sees", xid)
		}
	}
	for _, xid := range []uint32{104, 106, 300} {
		if !passes(open, begin(xid)) {
			t.Errorf("the window stays open at transaction %d, which the high snapshot does not see", xid)
		}
	}
	if passes(open, at(4999)) || !passes(open, at(5001)) {
		t.Error("closing by position: wrong side of the high watermark's position")
	}
	if passes(nil, begin(1)) || passes([]readOnlyWatermark{low}, at(1<<40)) {
		t.Error("a watermark passes without its close")
	}
}

func TestRecentXidsUnseen(t *testing.T) {
	var r recentXids
	s := pgSnapshot{xmin: 100, xmax: 110, xip: []uint64{105}}
	if _, ok := r.unseen(s); ok {
		t.Fatal("an empty ring misses a transaction")
	}
	for x := uint32(90); x < 105; x++ {
		r.add(x)
	}
	if _, ok := r.unseen(s); ok {
		t.Fatal("every delivered transaction is visible, yet one is missed")
	}
	r.add(105)
	if x, ok := r.unseen(s); !ok || x != 105 {
		t.Fatalf("unseen = %d, %v; want 105 (still running in the snapshot)", x, ok)
	}
	for x := uint32(0); x < uint32(len(r.xids)); x++ {
		r.add(x % 100) // all finished before the snapshot
	}
	if _, ok := r.unseen(s); ok {
		t.Fatal("a transaction delivered longer ago than the ring holds is still checked")
	}
}

func TestEmptyPageStart(t *testing.T) {
	const block, segment = 8192, 16 << 20
	for _, c := range []struct{ at, want LSN }{
		{3*block + walPageHeader, 3 * block},                       // a page with no record yet
		{segment + walLongPageHeader, segment},                     // a segment's first page has the long header
		{segment + walPageHeader, segment + walPageHeader},         // … so 24 bytes into it is inside that header's reach: a record's end
		{3*block + walLongPageHeader, 3*block + walLongPageHeader}, // a continued record ending after a short header
		{3*block + 48, 3*block + 48},
		{3 * block, 3 * block},
	} {
		if got := emptyPageStart(c.at, block, segment); got != c.want {
			t.Errorf("emptyPageStart(%s) = %s, want %s", c.at, got, c.want)
		}
	}
	if got := emptyPageStart(block+walPageHeader, 0, 0); got != block+walPageHeader {
		t.Errorf("unknown sizes moved the position to %s", got)
	}
}

func TestCheckReadOnly(t *testing.T) {
	cfg := &Config{Host: "db", Port: 5432}
	cfg.Signals.ReadOnly = true
	err := checkReadOnly(120017, cfg)
	if err == nil || !strings.Contains(err.Error(), "read.only=true") || !strings.Contains(err.Error(), "PostgreSQL 12.17") || !strings.Contains(err.Error(), "read.only=false") {
		t.Fatalf("PostgreSQL 12 with read.only: %v", err)
	}
	if err := checkReadOnly(130000, cfg); err != nil {
		t.Fatalf("PostgreSQL 13 with read.only: %v", err)
	}
	cfg.Signals.ReadOnly = false
	if err := checkReadOnly(120017, cfg); err != nil {
		t.Fatalf("read.only=false: %v", err)
	}
}
