package cluster

import (
	"maps"
	"slices"
	"time"
)

// assignor is the leader's incremental cooperative assignment, after Connect's
// IncrementalCooperativeAssignor. Its rules keep every item on at most one member:
//
//   - an item is handed out only when no member reports owning it; an item two members report, or one
//     no longer configured, is revoked from its owners and handed out in a later round, after they
//     rejoined without it;
//   - work of a member that left is held back for scheduled.rebalance.max.delay.ms, in case the
//     member comes back (a restart), then handed to the others;
//   - when the load is uneven, items are revoked from the busiest members and handed to the idle ones
//     in the next round, once the revocations took effect.
//
// Like Java's, its memory (what it handed out, what it holds back) lives only in the leader and is
// forgotten when leadership moves; a new leader hands unowned work out at once.
type assignor struct {
	maxDelay time.Duration

	ledGeneration int32           // generation of the last round this member led; -1 when none
	previous      map[Item]string // item → member it was left with after that round
	held          map[Item]bool   // lost items waiting for the deadline
	deadline      time.Time
}

func newAssignor(maxDelay time.Duration) *assignor {
	return &assignor{maxDelay: maxDelay, ledGeneration: -1}
}

// memberState is what a member reported when joining.
type memberState struct {
	id    string
	owned []Item
}

// plan is one round's outcome for every member.
type plan struct {
	assigned map[string][]Item // added this round
	revoked  map[string][]Item // to stop before rejoining
	delay    time.Duration     // until held-back work is handed out; 0 when nothing is held
}

// assign computes a round for generation at time now from the members' reports and the configured
// items (every connector as ConnectorTask, every committed task).
func (a *assignor) assign(now time.Time, generation int32, members []memberState, configured []Item) plan {
	p := plan{assigned: map[string][]Item{}, revoked: map[string][]Item{}}
	ids := make([]string, 0, len(members))
	owners := map[Item][]string{}
	for _, m := range members {
		ids = append(ids, m.id)
		for _, it := range m.owned {
			owners[it] = append(owners[it], m.id)
		}
	}
	slices.Sort(ids)
	isConfigured := map[Item]bool{}
	for _, it := range configured {
		isConfigured[it] = true
	}

	// What each member keeps, after deleted and duplicated items are revoked.
	kept := map[string][]Item{}
	for it, os := range owners {
		if !isConfigured[it] || len(os) > 1 {
			for _, o := range os {
				p.revoked[o] = append(p.revoked[o], it)
			}
			continue
		}
		kept[os[0]] = append(kept[os[0]], it)
	}

	if a.ledGeneration != generation-1 {
		// Leadership moved or rounds were missed: nothing is known about earlier owners.
		a.previous, a.held, a.deadline = nil, nil, time.Time{}
	}
	departed := false
	current := map[string]bool{}
	for _, id := range ids {
		current[id] = true
	}
	var lost []Item
	for it, owner := range a.previous {
		if !current[owner] {
			departed = true
		}
		if isConfigured[it] && owners[it] == nil {
			lost = append(lost, it)
		}
	}
	for it := range a.held {
		if isConfigured[it] && owners[it] == nil && a.previous[it] == "" {
			lost = append(lost, it)
		}
	}
	holdBack := map[Item]bool{}
	if len(lost) > 0 && a.maxDelay > 0 && (departed || len(a.held) > 0) {
		if a.deadline.IsZero() {
			a.deadline = now.Add(a.maxDelay)
		}
		if now.Before(a.deadline) {
			for _, it := range lost {
				holdBack[it] = true
			}
			p.delay = a.deadline.Sub(now)
		}
	}
	if len(holdBack) == 0 {
		a.deadline = time.Time{}
	}

	// Hand out what nobody owns, connectors before tasks, each to the member with the fewest of
	// that kind.
	final := map[string][]Item{}
	for _, id := range ids {
		final[id] = slices.Clone(kept[id])
	}
	var free []Item
	for _, it := range configured {
		if owners[it] == nil && !holdBack[it] {
			free = append(free, it)
		}
	}
	slices.SortFunc(free, func(x, y Item) int {
		if x.IsConnector() != y.IsConnector() {
			if x.IsConnector() {
				return -1
			}
			return 1
		}
		return compareItems(x, y)
	})
	if len(ids) > 0 {
		for _, it := range free {
			id := leastLoaded(ids, final, it.IsConnector())
			final[id] = append(final[id], it)
			p.assigned[id] = append(p.assigned[id], it)
		}
		if len(holdBack) == 0 && len(p.revoked) == 0 {
			a.rebalance(ids, final, p, true)
			a.rebalance(ids, final, p, false)
		}
	}

	a.ledGeneration = generation
	a.held = holdBack
	a.previous = map[Item]string{}
	for id, items := range final {
		for _, it := range items {
			a.previous[it] = id
		}
	}
	for id := range p.assigned {
		slices.SortFunc(p.assigned[id], compareItems)
	}
	for id := range p.revoked {
		slices.SortFunc(p.revoked[id], compareItems)
	}
	return p
}

// rebalance revokes items of one kind from the busiest members until no member holds two more than
// another would once the revoked items go to the idlest in the next round. Only items the member
// already ran are revoked; items assigned this round are simply not assigned.
func (a *assignor) rebalance(ids []string, final map[string][]Item, p plan, connectors bool) {
	load := map[string]int{}
	for _, id := range ids {
		load[id] = countKind(final[id], connectors)
	}
	for {
		busiest, idlest := ids[0], ids[0]
		for _, id := range ids {
			if load[id] > load[busiest] {
				busiest = id
			}
			if load[id] < load[idlest] {
				idlest = id
			}
		}
		if load[busiest]-load[idlest] <= 1 {
			return
		}
		victim, ok := revocable(final[busiest], p.assigned[busiest], connectors)
		if !ok {
			return
		}
		final[busiest] = slices.DeleteFunc(final[busiest], func(it Item) bool { return it == victim })
		p.revoked[busiest] = append(p.revoked[busiest], victim)
		load[busiest]--
		load[idlest]++ // it will get the item next round
	}
}

// revocable picks the last (in Item order) item of the kind the member ran before this round.
func revocable(items, newThisRound []Item, connectors bool) (Item, bool) {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, compareItems)
	for i := len(sorted) - 1; i >= 0; i-- {
		it := sorted[i]
		if it.IsConnector() == connectors && !slices.Contains(newThisRound, it) {
			return it, true
		}
	}
	return Item{}, false
}

func countKind(items []Item, connectors bool) int {
	n := 0
	for _, it := range items {
		if it.IsConnector() == connectors {
			n++
		}
	}
	return n
}

// leastLoaded returns the member with the fewest items of the kind, then the fewest items, then the
// first id.
func leastLoaded(ids []string, final map[string][]Item, connectors bool) string {
	best := ids[0]
	for _, id := range ids[1:] {
		a, b := countKind(final[id], connectors), countKind(final[best], connectors)
		if a < b || (a == b && len(final[id]) < len(final[best])) {
			best = id
		}
	}
	return best
}

// configuredItems lists the work a snapshot defines: each connector and each of its committed tasks.
func configuredItems(snap ConfigSnapshot) []Item {
	var items []Item
	for _, name := range slices.Sorted(maps.Keys(snap.Connectors)) {
		items = append(items, Item{Connector: name, Task: ConnectorTask})
		for i := range snap.Tasks[name] {
			items = append(items, Item{Connector: name, Task: i})
		}
	}
	return items
}
