package signal

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source/props"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want Signal
		err  string
	}{
		{doc: `{"id":"a","type":"execute-snapshot","data":{"data-collections":["s.t"]}}`,
			want: Signal{ID: "a", Type: "execute-snapshot", Data: `{"data-collections":["s.t"]}`}},
		{doc: `{"id":"b","type":"log","data":"{\"message\":\"hi\"}"}`, want: Signal{ID: "b", Type: "log", Data: `{"message":"hi"}`}},
		{doc: `{"id":"c","type":"pause-snapshot","data":null}`, want: Signal{ID: "c", Type: "pause-snapshot"}},
		{doc: `{"id":"c","type":"pause-snapshot"}`, want: Signal{ID: "c", Type: "pause-snapshot"}},
		{doc: `{"type":"log"}`, err: `needs an "id"`},
		{doc: `{"id":"x","type":"log","extra":1}`, err: "unknown field"},
		{doc: `[1]`, err: "JSON object"},
	} {
		got, err := Parse([]byte(tc.doc))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%s) = %v, %v; want an error with %q", tc.doc, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%s) = %+v, %v; want %+v", tc.doc, got, err, tc.want)
		}
	}
}

func TestSnapshotRequest(t *testing.T) {
	req, err := ParseSnapshotRequest(`{"data-collections": ["public\\.o.*", "public.items", " "], "additional-conditions":
		[{"data-collection": "public.items", "filter": "v > 10"}], "surrogate-key": "code"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if req.Type != Incremental || req.SurrogateKey != "code" {
		t.Fatalf("request %+v", req)
	}
	tables, unknown, err := req.Expand([]string{"public.items", "public.orders", "public.other", "x.orders"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tables, []string{"public.orders", "public.other", "public.items"}) || unknown != nil {
		t.Fatalf("Expand = %v, unknown %v", tables, unknown)
	}
	if req.ConditionFor("public.items") != "v > 10" || req.ConditionFor("public.orders") != "" {
		t.Fatal("additional-conditions picked wrongly")
	}
	if _, unknown, _ := req.Expand([]string{"public.items"}); !reflect.DeepEqual(unknown, []string{`public\.o.*`}) {
		t.Fatalf("an expression naming no table is not reported: %v", unknown)
	}
	for data, want := range map[string]string{
		`{"data-collections": []}`:                       "names no table",
		`{"data-collections": ["a.b"], "type": "other"}`: `snapshot type "other"`,
		`{"data-collections": "a.b"}`:                    "cannot unmarshal",
		`{"data-collections": ["a.b"], "additional-conditions": [{"data-collection": "(", "filter": "x"}]}`: "additional-conditions",
	} {
		if _, err := ParseSnapshotRequest(data, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSnapshotRequest(%s): %v, want an error with %q", data, err, want)
		}
	}
	if req, err := ParseSnapshotRequest(`{"type": "BLOCKING"}`, true); err != nil || req.Type != Blocking || len(req.DataCollections) != 0 {
		t.Fatalf("a stop-snapshot of every table: %+v, %v", req, err)
	}
}

func TestPollFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signals.txt")
	if s, bad, err := PollFile(path); s != nil || bad != nil || err != nil {
		t.Fatalf("a missing file: %v %v %v", s, bad, err)
	}
	content := `{"id":"1","type":"log","data":{"message":"one"}}` + "\n\n" + `not json` + "\n" + `{"id":"2","type":"pause-snapshot"}` + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	signals, bad, err := PollFile(path)
	if err != nil || len(signals) != 2 || signals[0].ID != "1" || signals[1].ID != "2" {
		t.Fatalf("signals %+v, %v", signals, err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0].Error(), "line 3") {
		t.Fatalf("the bad line is not reported with its number: %v", bad)
	}
	if after, _ := os.ReadFile(path); len(after) != 0 {
		t.Fatalf("the file was not emptied: %q", after)
	}
	if s, _, _ := PollFile(path); s != nil {
		t.Fatal("an emptied file gave signals again")
	}
}

// TestPollFileLeavesOtherFilesAlone: a file signal.file names by mistake is reported and left as it is: a
// FIFO is not read (nor waited on), a file larger than a signal file is neither read nor emptied, and a
// file without a single signal is not emptied.
func TestPollFileLeavesOtherFilesAlone(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := PollFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO: %v", err)
	}
	large := filepath.Join(dir, "large")
	content := bytes.Repeat([]byte(`{"id":"1","type":"log","data":{"message":"one"}}`+"\n"), maxSignalFile/40)
	notSignals := filepath.Join(dir, "settings")
	for path, data := range map[string][]byte{large: content, notSignals: []byte("user=app\npassword=secret\n")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		signals, bad, err := PollFile(path)
		if len(signals) != 0 || (err == nil && len(bad) == 0) {
			t.Errorf("%s: signals %v, bad %v, err %v; want it reported", path, signals, bad, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
			t.Errorf("%s was changed: %d bytes left of %d", path, len(after), len(data))
		}
	}
}

func TestReadConfig(t *testing.T) {
	p := props.NewParser(map[string]string{"signal.data.collection": "public.sig", "signal.enabled.channels": "source, file, rest",
		"signal.file": "/tmp/s", "signal.poll.interval.ms": "250", "incremental.snapshot.chunk.size": "10",
		"incremental.snapshot.watermarking.strategy": "insert_delete", "snapshot.query.timeout.ms": "1500"})
	c := ReadConfig(p, "p")
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	want := Config{Table: "public.sig", Source: true, File: true, REST: true, QueryTimeout: 1500 * time.Millisecond, FilePath: "/tmp/s", PollInterval: 250 * time.Millisecond, ChunkSize: 10, DeleteWatermarks: true,
		KafkaChannel: KafkaConfig{Key: "p", AutoCommit: true, CommitInterval: 5 * time.Second, Spec: KafkaSpec{Topic: "p-signal", GroupID: "kafka-signal"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("config %+v, want %+v", c, want)
	}
	if c := ReadConfig(props.NewParser(nil), "p"); !c.Source || c.File || c.REST || c.ChunkSize != 1024 || c.PollInterval != 5*time.Second || c.QueryTimeout != 10*time.Minute {
		t.Fatalf("defaults %+v", c)
	}
	for settings, want := range map[string]string{
		"jmx":        "does not read the jmx signal channel yet",
		"in-process": "does not read the in-process signal channel yet",
		"carrier":    `unknown signal channel "carrier"`,
	} {
		p := props.NewParser(map[string]string{"signal.enabled.channels": settings})
		ReadConfig(p, "p")
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "signal.enabled.channels") {
			t.Errorf("signal.enabled.channels=%s: %v", settings, err)
		}
	}
	p = props.NewParser(map[string]string{"signal.data.collection": "sig"})
	ReadConfig(p, "p")
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "<schema>.<table>") {
		t.Fatalf("a signal table without its schema: %v", err)
	}
}

func TestSeenForgetsTheOldest(t *testing.T) {
	var s Seen
	if !s.First("a") || s.First("a") {
		t.Fatal("a signal id is new once")
	}
	for i := 0; i < seenCapacity; i++ {
		s.First(strings.Repeat("x", i+1))
	}
	if !s.First("a") {
		t.Fatal("the oldest id is still remembered beyond the capacity")
	}
}
