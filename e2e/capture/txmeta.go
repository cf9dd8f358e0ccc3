package capture

import (
	"bytes"
	"regexp"
	"slices"
)

// Debezium's PostgreSQL connector counts each logical decoding message of a transaction under a data
// collection of its own, named by Object.toString: class@identity-hash, random on every run. The name shows
// in END records' data_collections and in the offset keys transaction_data_collection_order_<name>, and,
// being random, so does its place in Java's HashMap order. Both sides of a comparison get one spelling and
// those entries moved last, which keeps the order of every other entry as compared.
var messageCollection = regexp.MustCompile(`LogicalDecodingMessageId@[0-9a-f]+`)

const messageCollectionBlanked = "LogicalDecodingMessageId@<identity-hash>"

// normaliseMessageCollections rewrites a transaction-topic value or an offset value as described above;
// any other document comes back as it is.
func normaliseMessageCollections(raw Bytes) Bytes {
	if !messageCollection.Match(raw) {
		return raw
	}
	out := messageCollection.ReplaceAll(raw, []byte(messageCollectionBlanked))
	doc, err := parseJSON(out)
	if err != nil {
		return out
	}
	payload := payloadOf(doc)
	if payload.kind != '{' {
		return out
	}
	// An offset: its keys. A transaction END: the elements of data_collections.
	isMessage := func(text []byte) bool { return bytes.Contains(text, []byte(messageCollectionBlanked)) }
	target := payload
	if dc := payload.get("data_collections"); dc != nil && dc.kind == '[' {
		target = dc
	}
	return moveLast(out, target, func(i int) bool {
		if target.kind == '{' {
			return isMessage([]byte(target.keys[i]))
		}
		c := target.children[i]
		return isMessage(out[c.start:c.end])
	})
}

// moveLast returns raw with the members (object) or elements (array) of n for which last is true moved
// after the others, each keeping its bytes; the others keep their order.
func moveLast(raw []byte, n *node, last func(i int) bool) []byte {
	if len(n.children) < 2 {
		return raw
	}
	// A member's text runs from its key (the byte after the previous separator) to its value's end.
	spans := make([][2]int, len(n.children))
	for i, c := range n.children {
		start := n.start + 1
		if i > 0 {
			start = n.children[i-1].end + 1 // after the comma
		}
		spans[i] = [2]int{start, c.end}
	}
	order := make([]int, 0, len(spans))
	for i := range spans {
		if !last(i) {
			order = append(order, i)
		}
	}
	for i := range spans {
		if last(i) {
			order = append(order, i)
		}
	}
	if slices.IsSorted(order) {
		return raw
	}
	out := append([]byte(nil), raw[:n.start+1]...)
	for j, i := range order {
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, bytes.TrimSpace(raw[spans[i][0]:spans[i][1]])...)
	}
	return append(out, raw[spans[len(spans)-1][1]:]...)
}

// isTransactionValue reports whether a value is a transaction-topic record
// (io.debezium.connector.common.TransactionMetadataValue: status, id, event_count, data_collections, ts_ms).
func isTransactionValue(raw Bytes) bool {
	doc, err := parseJSON(raw)
	if err != nil {
		return false
	}
	payload := payloadOf(doc)
	return payload.kind == '{' && len(payload.keys) == 5 && payload.keys[0] == "status" && payload.keys[3] == "data_collections"
}

// transactionRules blank, in Replay mode, what differs between two databases in a transaction-topic value:
// the transaction id (an xid and LSN, a GTID or a binlog position) and its time.
func transactionRules(_ []byte, payload *node, mode Mode) []*node {
	if mode != Replay {
		return nil
	}
	var out []*node
	for _, name := range []string{"id", "ts_ms"} {
		if n := payload.get(name); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// transactionKeyRules blank, in Replay mode, the transaction id of a transaction-topic key.
func transactionKeyRules(mode Mode) blankRule {
	return func(_ []byte, payload *node) []*node {
		if n := payload.get("id"); n != nil && mode == Replay {
			return []*node{n}
		}
		return nil
	}
}
