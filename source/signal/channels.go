package signal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// Channel names of signal.enabled.channels that cdcd reads.
const (
	ChannelSource = "source" // the signal table (signal.data.collection), read from the change stream
	ChannelFile   = "file"   // signal.file, polled every signal.poll.interval.ms
	// ChannelREST is cdcd's own POST /connectors/{name}/signals. Off unless listed, as every channel but
	// source is in Debezium: a REST client could otherwise start snapshots that only writers of the
	// signal table or topic can start in Debezium. Debezium ignores a channel name it does not know, so a
	// configuration listing it still runs there.
	ChannelREST = "rest"
)

// Config is a connector's signalling settings.
type Config struct {
	// Table is signal.data.collection as schema.table ("" when unset): the source channel's table and
	// where incremental snapshots write their watermarks.
	Table                     string
	Source, File, Kafka, REST bool
	FilePath                  string
	// Dialect is the connector's SQL, in which additional-conditions filters are read.
	Dialect sqlfilter.Dialect
	// QueryTimeout is snapshot.query.timeout.ms: the longest a query of a snapshot a signal started may run
	// (an incremental snapshot's chunk and largest-key queries, a blocking snapshot's reads with
	// additional-conditions); 0 for no limit.
	QueryTimeout time.Duration
	// KafkaChannel is the kafka channel's settings (signal.kafka.*, signal.consumer.*), read whether the
	// channel is on or not.
	KafkaChannel KafkaConfig
	PollInterval time.Duration
	// ChunkSize is incremental.snapshot.chunk.size: rows an incremental snapshot reads per window.
	ChunkSize int
	// DeleteWatermarks is incremental.snapshot.watermarking.strategy=insert_delete: a window is closed by
	// deleting its open watermark instead of inserting a close watermark, so the signal table stays small.
	DeleteWatermarks bool
	// ReadOnly is read.only=true: a window's watermarks are taken from the server before and after its
	// chunk query (GTID positions on MariaDB and MySQL, pg_current_snapshot() on PostgreSQL), not rows
	// written into the signal table, so the connector writes nothing to the database.
	ReadOnly bool
}

// QueryTimeoutKey is cdcd's own key bounding the queries of the snapshots signals start.
const QueryTimeoutKey = "snapshot.query.timeout.ms"

// ReadConfig reads the signalling keys Debezium's CommonConnectorConfig declares, signal.file, the kafka
// channel's keys (Debezium's KafkaSignalChannel: signal.kafka.*, signal.consumer.*) and
// snapshot.query.timeout.ms; topicPrefix is the connector's topic.prefix, the key of its Kafka signals. The
// jmx and in-process channels are refused with what to use instead. The connector sets Dialect.
func ReadConfig(p *props.Parser, topicPrefix string) Config {
	c := Config{
		Table:        p.Str("signal.data.collection", ""),
		FilePath:     p.Str("signal.file", "file-signals.txt"),
		PollInterval: p.Millis("signal.poll.interval.ms", 5000),
		ChunkSize:    p.Integer("incremental.snapshot.chunk.size", 1024, 1, 1<<20),
		QueryTimeout: p.Millis(QueryTimeoutKey, 600000),
	}
	c.DeleteWatermarks = p.OneOf("incremental.snapshot.watermarking.strategy", "insert_insert", "insert_insert", "insert_delete") == "insert_delete"
	channels, _ := p.Raw("signal.enabled.channels")
	if _, set := p.Raw("signal.enabled.channels"); !set {
		channels = ChannelSource
	}
	p.Str("signal.enabled.channels", "")
	for _, ch := range strings.Split(channels, ",") {
		switch ch = strings.TrimSpace(ch); ch {
		case "":
		case ChannelSource:
			c.Source = true
		case ChannelFile:
			c.File = true
		case ChannelKafka:
			c.Kafka = true
		case ChannelREST:
			c.REST = true
		case "jmx", "in-process":
			p.Fail("signal.enabled.channels", channels, fmt.Sprintf("cdcd does not read the %s signal channel yet; use source (the signal table), file (signal.file), kafka (signal.kafka.topic) or rest (POST /connectors/{name}/signals)", ch))
		default:
			p.Fail("signal.enabled.channels", channels, fmt.Sprintf("unknown signal channel %q; the channels are source, file, kafka and rest", ch))
		}
	}
	c.KafkaChannel = readKafka(p, topicPrefix, c.Kafka)
	if c.Table != "" && strings.Count(c.Table, ".") != 1 {
		p.Fail("signal.data.collection", c.Table, "name the signal table as <schema>.<table>")
	}
	return c
}

// maxSignalFile bounds what one poll of the signal file reads: signals are a few hundred bytes each.
const maxSignalFile = 1 << 20

// PollFile reads the signals in the signal file, one JSON document per line, and empties the file, as
// Debezium's FileSignalChannel does. A missing file holds no signals. A line that is not a signal is
// returned in bad (with its line number) and dropped, so one typo does not block the signals after it.
// The file is emptied only when it is a signal file: a regular file of at most maxSignalFile bytes with
// at least one signal in it. Another file signal.file names by mistake (a device, a FIFO, a large file, a
// file of something else) is reported and left as it is.
func PollFile(path string) (signals []Signal, bad []error, err error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores it.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("signal.file %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("signal.file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("signal.file %s is not a regular file (%s); name a file of its own for the signals", path, info.Mode().Type())
	}
	if info.Size() > maxSignalFile {
		return nil, nil, fmt.Errorf("signal.file %s: %d bytes, more than a signal file's %d; it is neither read nor emptied: name a file of its own for the signals, or empty this one", path, info.Size(), maxSignalFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSignalFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("signal.file %s: %w", path, err)
	}
	if len(data) > maxSignalFile {
		return nil, nil, fmt.Errorf("signal.file %s: more than a signal file's %d bytes; it is neither read nor emptied", path, maxSignalFile)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxSignalFile)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		s, err := Parse(line)
		if err != nil {
			bad = append(bad, fmt.Errorf("signal.file %s line %d: %w", path, n, err))
			continue
		}
		signals = append(signals, s)
	}
	if len(signals) == 0 {
		if len(bad) > 0 {
			bad = append(bad, fmt.Errorf("signal.file %s holds no signal; it is left as it is (fix or remove its lines)", path))
		}
		return nil, bad, nil
	}
	if err := f.Truncate(0); err != nil {
		return nil, nil, fmt.Errorf("signal.file %s: emptying it after reading: %w", path, err)
	}
	return signals, bad, nil
}

// Seen remembers the ids of the signals a reader has acted on in this run, so that one read again after
// a reconnection (the stream restarts from the durable position) is not acted on twice. Bounded: it
// forgets the oldest beyond its capacity.
type Seen struct {
	ids []string
}

const seenCapacity = 256

// First reports whether id is new, and remembers it.
func (s *Seen) First(id string) bool {
	if slices.Contains(s.ids, id) {
		return false
	}
	if len(s.ids) == seenCapacity {
		s.ids = s.ids[1:]
	}
	s.ids = append(s.ids, id)
	return true
}
