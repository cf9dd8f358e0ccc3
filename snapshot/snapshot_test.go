package snapshot

import (
	"errors"
	"testing"
)

func TestDecide(t *testing.T) {
	fresh := State{}
	resumed := State{HasOffset: true, InProgress: true}
	streaming := State{HasOffset: true}
	lost := State{HasOffset: true, PositionLost: true}
	cases := []struct {
		mode Mode
		st   State
		want Plan
	}{
		{Initial, fresh, Plan{Snapshot: true, Stream: true}},
		{Initial, resumed, Plan{Snapshot: true, Stream: true, Resume: true}},
		{Initial, streaming, Plan{Stream: true}},
		{InitialOnly, fresh, Plan{Snapshot: true}},
		{InitialOnly, streaming, Plan{}},
		{NoData, fresh, Plan{Stream: true}},
		{Always, streaming, Plan{Snapshot: true, Stream: true}},
		{WhenNeeded, streaming, Plan{Stream: true}},
		{WhenNeeded, lost, Plan{Snapshot: true, Stream: true}},
		{WhenNeeded, fresh, Plan{Snapshot: true, Stream: true}},
	}
	for _, c := range cases {
		if got := c.mode.Decide(c.st); got != c.want {
			t.Errorf("%s with %+v: got %+v, want %+v", c.mode, c.st, got, c.want)
		}
	}
}

func TestParseModeMapsLegacyNames(t *testing.T) {
	for in, want := range map[string]Mode{"never": NoData, "schema_only": NoData, "INITIAL": Initial, "": Initial} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseMode("recovery"); err == nil {
		t.Error("recovery is not a PostgreSQL snapshot mode and must be refused")
	}
}

// Debezium's resolver, as its golden capture shows: a one-row table that is not the first gets
// last_in_data_collection; the first row of the first table gets first.
func TestRowMarker(t *testing.T) {
	cases := []struct {
		firstTable, lastTable, firstRow, lastRow bool
		want                                     Marker
	}{
		{true, false, true, false, First},
		{true, false, true, true, First}, // a one-row first table: first wins over last_in_data_collection
		{false, false, true, true, LastInDataCollection},
		{false, false, true, false, FirstInDataCollection},
		{false, false, false, false, True},
		{false, true, false, true, Last},
		{true, true, true, true, Last},
	}
	for _, c := range cases {
		if got := RowMarker(c.firstTable, c.lastTable, c.firstRow, c.lastRow); got != c.want {
			t.Errorf("RowMarker(%v,%v,%v,%v) = %s, want %s", c.firstTable, c.lastTable, c.firstRow, c.lastRow, got, c.want)
		}
	}
}

func TestCoveredUsesTheEpochOfTheKey(t *testing.T) {
	p := &Progress{Tables: []TableProgress{{
		ID: "public.t",
		Epochs: []Epoch{
			{UpTo: []string{"100"}, Position: 1000}, // keys ≤ 100 read at 1000
			{Position: 2000},                        // the rest read at 2000
		},
	}}}
	keyIs := func(k int) func([]string) (bool, error) {
		return func(up []string) (bool, error) { return up[0] == "100" && k <= 100, nil }
	}
	cases := []struct {
		key    int
		commit uint64
		want   bool
	}{
		{50, 999, true},   // in the first epoch's snapshot
		{50, 1500, false}, // after the first epoch: must be streamed
		{150, 1500, true}, // the second epoch saw it
		{150, 2000, false},
	}
	for _, c := range cases {
		got, err := p.Covered("public.t", c.commit, keyIs(c.key))
		if err != nil || got != c.want {
			t.Errorf("key %d commit %d: covered=%v (%v), want %v", c.key, c.commit, got, err, c.want)
		}
	}
	if got, _ := p.Covered("public.other", 1, nil); got {
		t.Error("a table outside the snapshot is never covered")
	}
	_, err := p.Covered("public.t", 1, func([]string) (bool, error) { return false, errors.New("boom") })
	if err == nil {
		t.Error("a failing key comparison must surface")
	}
}

func TestProgressRoundTrip(t *testing.T) {
	p := &Progress{Tables: []TableProgress{{ID: "a.b", Done: true, Rows: 3, Epochs: []Epoch{{Position: 7}}}, {ID: "a.c", LastKey: []string{"x"}}}}
	q, err := DecodeProgress(p.Encode())
	if err != nil || q.Encode() != p.Encode() || q.Complete() || q.MaxPosition() != 7 {
		t.Fatalf("round trip: %+v, %v", q, err)
	}
	c := p.Clone()
	c.Tables[1].LastKey[0] = "y"
	if p.Tables[1].LastKey[0] != "x" {
		t.Error("Clone shares key slices")
	}
}
