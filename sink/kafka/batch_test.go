package kafka

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"
	"time"

	"github.com/cdcd/cdcd/sink"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

// The batches the producer sends, read back by kafka-go's own decoder: records (null and empty keys,
// tombstones, headers, timestamps) intact under every codec, and the producer id, epoch and base sequence
// stamped into the header with a CRC the broker accepts — also after a restamp (an epoch bump).
func TestEncodedBatchDecodesWithKafkaGo(t *testing.T) {
	at := time.UnixMilli(1700000000123)
	recs := []sink.Record{
		{Topic: "t", Key: []byte("k1"), Value: []byte("v1"), Time: at, Headers: []sink.Header{{Key: "h", Value: []byte("x")}, {Key: "empty", Value: []byte{}}}},
		{Topic: "t", Key: nil, Value: []byte("no key"), Time: at.Add(time.Second)},
		{Topic: "t", Key: []byte{}, Value: nil, Time: at.Add(2 * time.Second)}, // an empty key and a tombstone
	}
	for _, codec := range []kafkago.Compression{0, kafkago.Gzip, kafkago.Snappy, kafkago.Lz4, kafkago.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			enc, err := encodeBatch(recs, protocol.Attributes(codec))
			if err != nil {
				t.Fatal(err)
			}
			for _, stamp := range []struct {
				id    int64
				epoch int16
				seq   int32
			}{{4242, 3, 17}, {4242, 4, 0}} {
				stampBatch(enc, stamp.id, stamp.epoch, stamp.seq)
				if got, want := binary.BigEndian.Uint32(enc[batchCRCAt:]), crc32.Checksum(enc[batchAttributesAt:], castagnoli); got != want {
					t.Fatalf("CRC %x, want %x", got, want)
				}
				var rs protocol.RecordSet
				if _, err := rs.ReadFrom(bytes.NewReader(enc)); err != nil {
					t.Fatal(err)
				}
				stream := rs.Records.(*protocol.RecordStream)
				if len(stream.Records) != 1 {
					t.Fatalf("%d batches, want 1", len(stream.Records))
				}
				batch, ok := stream.Records[0].(*protocol.RecordBatch)
				if !ok {
					t.Fatalf("decoded a %T", stream.Records[0])
				}
				if batch.ProducerID != stamp.id || batch.ProducerEpoch != stamp.epoch || batch.BaseSequence != stamp.seq {
					t.Fatalf("producer %d epoch %d sequence %d, want %+v", batch.ProducerID, batch.ProducerEpoch, batch.BaseSequence, stamp)
				}
				if batch.Attributes.Compression() != codec {
					t.Fatalf("compression %v, want %v", batch.Attributes.Compression(), codec)
				}
				got := readAll(t, batch)
				if len(got) != len(recs) {
					t.Fatalf("%d records, want %d", len(got), len(recs))
				}
				for i, r := range got {
					want := recs[i]
					key, value := r.Key, r.Value
					if (key == nil) != (want.Key == nil) || !bytes.Equal(key, want.Key) || (value == nil) != (want.Value == nil) ||
						!bytes.Equal(value, want.Value) || !r.Time.Equal(want.Time) || r.Offset != int64(i) || len(r.Headers) != len(want.Headers) {
						t.Fatalf("record %d: key %q value %q at %v offset %d headers %v, want %+v", i, key, value, r.Time, r.Offset, r.Headers, want)
					}
					for j, h := range r.Headers {
						if h.Key != want.Headers[j].Key || !bytes.Equal(h.Value, want.Headers[j].Value) {
							t.Fatalf("record %d header %d: %q=%q, want %+v", i, j, h.Key, h.Value, want.Headers[j])
						}
					}
				}
			}
		})
	}
}

// bytesOf reads a record field; nil stays nil (a null key or a tombstone).
func bytesOf(t *testing.T, b protocol.Bytes) []byte {
	t.Helper()
	if b == nil {
		return nil
	}
	out, err := protocol.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

// decodedRecord is a record read back, copied out of the decoder's reused Record.
type decodedRecord struct {
	Key, Value []byte
	Time       time.Time
	Offset     int64
	Headers    []protocol.Header
}

func readAll(t *testing.T, r protocol.RecordReader) []decodedRecord {
	t.Helper()
	var out []decodedRecord
	for {
		rec, err := r.ReadRecord()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decodedRecord{Key: bytesOf(t, rec.Key), Value: bytesOf(t, rec.Value), Time: rec.Time, Offset: rec.Offset,
			Headers: append([]protocol.Header(nil), rec.Headers...)})
	}
}
