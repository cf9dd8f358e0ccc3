package main

import "testing"

// ok: nothing lost, reordered or unexpected (duplicates are allowed).
func (c correctness) ok() bool { return c.Lost == 0 && c.OrderViolations == 0 && c.Unexpected == 0 }

func TestCheckChangesClean(t *testing.T) {
	committed := []change{{1, 1, 'c'}, {2, 2, 'c'}, {1, 3, 'u'}, {2, 0, 'd'}, {1, 5, 'u'}}
	// Different keys may interleave in any order; per key the order holds.
	seen := []change{{2, 2, 'c'}, {1, 1, 'c'}, {2, 0, 'd'}, {1, 3, 'u'}, {1, 5, 'u'}}
	if got := checkChanges(committed, seen); got != (correctness{}) || !got.ok() {
		t.Errorf("got %+v, want nothing wrong", got)
	}
}

func TestCheckChangesFindsLossReorderAndDuplicates(t *testing.T) {
	committed := []change{{1, 1, 'c'}, {1, 2, 'u'}, {1, 3, 'u'}, {2, 4, 'c'}, {2, 0, 'd'}, {3, 6, 'c'}}
	seen := []change{
		{1, 1, 'c'}, {1, 3, 'u'}, {1, 2, 'u'}, // version 2 after 3: one violation
		{1, 3, 'u'},              // redelivered: a duplicate, not a violation
		{2, 0, 'd'}, {2, 4, 'c'}, // insert after delete: one violation
		{9, 9, 'c'}, // never committed
		// {3,6,c} lost
	}
	got := checkChanges(committed, seen)
	want := correctness{Lost: 1, OrderViolations: 2, Duplicates: 1, Unexpected: 1}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.ok() {
		t.Error("ok() with losses")
	}
}

func TestDecodeChange(t *testing.T) {
	withSchema := `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"payload"}]},"payload":{"before":null,"after":{"id":7,"k":42,"payload":"x\"payload\":{","updated_at":"2024-01-01T00:00:00Z"},"source":{"ts_ms":1700000000123,"lsn":1},"op":"c","ts_ms":1700000000200}}`
	c, ts, err := decodeChange([]byte(withSchema))
	if err != nil {
		t.Fatal(err)
	}
	if c != (change{ID: 7, K: 42, Op: 'c'}) || ts != 1700000000123 {
		t.Errorf("got %+v ts %d", c, ts)
	}
	del := `{"before":{"id":8,"k":null,"payload":null},"after":null,"source":{"ts_ms":5},"op":"d"}`
	c, ts, err = decodeChange([]byte(del))
	if err != nil || c != (change{ID: 8, Op: 'd'}) || ts != 5 {
		t.Errorf("delete: %+v %d %v", c, ts, err)
	}
	for _, bad := range []string{`{"op":"u","after":null}`, `not json`, `{"schema":{},"payload":{"op":"c"`} {
		if _, _, err := decodeChange([]byte(bad)); err == nil {
			t.Errorf("decodeChange(%s) succeeded", bad)
		}
	}
}
