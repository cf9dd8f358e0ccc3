package cluster

import (
	"encoding/hex"
	"reflect"
	"testing"
	"time"
)

func TestFirstJoinMetadataIsConnectsBytes(t *testing.T) {
	// The spec's example: sessioned, url http://w1:8083/, config offset 42, no allocation yet.
	got := encodeMetadata(versionSessioned, workerMetadata{URL: "http://w1:8083/", ConfigOffset: 42})
	want := "0002" + "000f" + hex.EncodeToString([]byte("http://w1:8083/")) + "000000000000002a" + "ffffffff"
	if hex.EncodeToString(got) != want {
		t.Fatalf("metadata\n got %x\nwant %s", got, want)
	}
}

func TestAssignmentBytesGroupItemsByConnector(t *testing.T) {
	a := assignment{Leader: "m-1", LeaderURL: "http://w1:8083/", ConfigOffset: 7,
		Assigned: []Item{{"b", 0}, {"a", ConnectorTask}, {"a", 1}}, Revoked: []Item{{"c", 2}}, Delay: 3000}
	got := hex.EncodeToString(encodeAssignment(versionCompatible, a))
	want := "0001" + "0000" + "0003" + hex.EncodeToString([]byte("m-1")) + "000f" + hex.EncodeToString([]byte("http://w1:8083/")) +
		"0000000000000007" +
		"00000002" + "0001" + "61" + "00000002" + "ffffffff" + "00000001" + "0001" + "62" + "00000001" + "00000000" +
		"00000001" + "0001" + "63" + "00000001" + "00000002" +
		"00000bb8"
	if got != want {
		t.Fatalf("assignment\n got %s\nwant %s", got, want)
	}
}

func TestMetadataAndAssignmentRoundTrip(t *testing.T) {
	alloc := assignment{Leader: "m-1", LeaderURL: "http://w1:8083/", ConfigOffset: 9, Assigned: []Item{{"a", ConnectorTask}, {"a", 0}}, Revoked: nil}
	meta := workerMetadata{URL: "http://w2:8083/", ConfigOffset: 9, Allocation: &alloc}
	got, err := decodeMetadata(encodeMetadata(versionSessioned, meta))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, meta) {
		t.Fatalf("round trip: %+v, want %+v", got, meta)
	}
}

func TestDecodersRefuseTruncatedInputWithoutPanicking(t *testing.T) {
	full := encodeMetadata(versionSessioned, workerMetadata{URL: "http://w:1/", ConfigOffset: 1,
		Allocation: &assignment{Leader: "l", Assigned: []Item{{"a", 0}}}})
	for n := 0; n < len(full); n++ {
		if n == 2+2+len("http://w:1/")+8 { // metadata without an allocation field is valid (V0 layout)
			continue
		}
		if _, err := decodeMetadata(full[:n]); err == nil {
			t.Errorf("decodeMetadata accepted %d of %d bytes", n, len(full))
		}
	}
	// A V0 assignment (eager) lacks revoked and delay; Java's tolerant schema reads it, and so do we.
	v0 := encodeAssignment(0, assignment{Leader: "l", Assigned: []Item{{"a", 1}}})
	v0 = v0[:len(v0)-8] // drop the empty revoked array and the delay
	a, err := decodeAssignment(v0)
	if err != nil || !reflect.DeepEqual(a.Assigned, []Item{{"a", 1}}) {
		t.Fatalf("V0 assignment: %+v, %v", a, err)
	}
}

func items(conns ...string) []Item {
	var out []Item
	for _, c := range conns {
		out = append(out, Item{c, ConnectorTask}, Item{c, 0}, Item{c, 1})
	}
	return out
}

func owners(p plan, prev map[string][]Item) map[string][]Item {
	out := map[string][]Item{}
	for id, its := range prev {
		for _, it := range its {
			if !containsItem(p.revoked[id], it) {
				out[id] = append(out[id], it)
			}
		}
	}
	for id, its := range p.assigned {
		out[id] = append(out[id], its...)
	}
	return out
}

func containsItem(items []Item, it Item) bool {
	for _, x := range items {
		if x == it {
			return true
		}
	}
	return false
}

func TestAssignorSpreadsWorkAndRevokesBeforeMoving(t *testing.T) {
	a := newAssignor(time.Minute)
	now := time.Unix(1000, 0)
	configured := items("a", "b", "c")
	// One member gets everything…
	p := a.assign(now, 1, []memberState{{id: "m1"}}, configured)
	if len(p.assigned["m1"]) != 9 {
		t.Fatalf("single member got %v", p.assigned)
	}
	// …then two more join: m1 must revoke before anyone else gets its items.
	m1 := p.assigned["m1"]
	p = a.assign(now, 2, []memberState{{id: "m1", owned: m1}, {id: "m2"}, {id: "m3"}}, configured)
	if len(p.assigned["m2"])+len(p.assigned["m3"]) != 0 {
		t.Fatalf("items handed out while still owned by m1: %v", p.assigned)
	}
	if len(p.revoked["m1"]) != 6 {
		t.Fatalf("m1 revoked %v, want 6 items (2 connectors, 4 tasks)", p.revoked["m1"])
	}
	state := owners(p, map[string][]Item{"m1": m1})
	p = a.assign(now, 3, []memberState{{id: "m1", owned: state["m1"]}, {id: "m2"}, {id: "m3"}}, configured)
	state = owners(p, state)
	for _, id := range []string{"m1", "m2", "m3"} {
		if got := state[id]; len(got) != 3 || countKind(got, true) != 1 {
			t.Errorf("%s holds %v, want 1 connector and 2 tasks", id, got)
		}
	}
}

func TestAssignorHoldsADepartedMembersWorkUntilTheDelay(t *testing.T) {
	a := newAssignor(time.Minute)
	now := time.Unix(1000, 0)
	configured := items("a", "b")
	p := a.assign(now, 1, []memberState{{id: "m1"}, {id: "m2"}}, configured)
	gone := p.assigned["m2"]
	p = a.assign(now.Add(time.Second), 2, []memberState{{id: "m1", owned: p.assigned["m1"]}}, configured)
	if len(p.assigned["m1"]) != 0 || p.delay != time.Minute {
		t.Fatalf("before the delay: assigned %v, delay %s", p.assigned, p.delay)
	}
	m1 := configuredMinus(configured, gone)
	p = a.assign(now.Add(time.Second+time.Minute), 3, []memberState{{id: "m1", owned: m1}}, configured)
	if !reflect.DeepEqual(p.assigned["m1"], gone) || p.delay != 0 {
		t.Fatalf("after the delay: assigned %v (want %v), delay %s", p.assigned["m1"], gone, p.delay)
	}
}

func TestAssignorRevokesDuplicatesAndDeletedWork(t *testing.T) {
	a := newAssignor(time.Minute)
	p := a.assign(time.Unix(0, 0), 5, []memberState{
		{id: "m1", owned: []Item{{"a", ConnectorTask}, {"gone", ConnectorTask}}},
		{id: "m2", owned: []Item{{"a", ConnectorTask}}},
	}, []Item{{"a", ConnectorTask}})
	if !reflect.DeepEqual(p.revoked["m1"], []Item{{"a", ConnectorTask}, {"gone", ConnectorTask}}) || !reflect.DeepEqual(p.revoked["m2"], []Item{{"a", ConnectorTask}}) {
		t.Fatalf("revoked %v", p.revoked)
	}
	if len(p.assigned) != 0 {
		t.Fatalf("a duplicated item must not be handed out in the round it is revoked: %v", p.assigned)
	}
}

func configuredMinus(all, minus []Item) []Item {
	var out []Item
	for _, it := range all {
		if !containsItem(minus, it) {
			out = append(out, it)
		}
	}
	return out
}
