package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/cdcd/cdcd/sink"
	"github.com/segmentio/kafka-go/protocol"
)

// A record batch is encoded once, by kafka-go's RecordSet encoder (magic 2, compression included), and
// sent as the raw record set of a rawproduce request. That encoder writes the producer id, epoch and base
// sequence as -1 (record_v2.go), so the producer stamps them into the encoded header afterwards and
// recomputes the CRC, which covers everything from the attributes on. Stamping again is how a batch is
// given a new epoch and sequence after an epoch bump without encoding or compressing it again, which is
// also what the Java producer does (ProducerBatch.resetProducerState rewrites the header).
//
// Offsets in RecordSet.WriteTo's output: the record set's 4-byte length, then the batch header
// (Kafka's DefaultRecordBatch: base offset 0, length 8, leader epoch 12, magic 16, CRC 17, attributes 21,
// last offset delta 23, timestamps 27 and 35, producer id 43, epoch 51, base sequence 53, count 57).
const (
	recordSetLengthSize  = 4
	batchCRCAt           = recordSetLengthSize + 17
	batchAttributesAt    = recordSetLengthSize + 21
	batchProducerIDAt    = recordSetLengthSize + 43
	batchProducerEpochAt = recordSetLengthSize + 51
	batchBaseSequenceAt  = recordSetLengthSize + 53
	batchHeaderSize      = 61 // what a batch costs beyond its records, for max.request.size
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// noProducerID is the producer id, epoch and sequence of a batch written without idempotence.
const noProducerID = -1

// encodeBatch encodes recs as one record batch with the given attributes (compression, and later the
// transactional bit) and the producer fields unset (-1). recs must not be empty.
// The slice is from encodedPool; releaseEncoded returns it once no request refers to it.
func encodeBatch(recs []sink.Record, attributes protocol.Attributes) ([]byte, error) {
	rs := protocol.RecordSet{Version: 2, Attributes: attributes, Records: &recordReader{recs: recs}}
	var b []byte
	if pooled, ok := encodedPool.Get().(*[]byte); ok {
		b = (*pooled)[:0]
	}
	buf := bytes.NewBuffer(b)
	buf.Grow(batchHeaderSize + recordSetLengthSize + int(estimatedSize(recs)))
	if _, err := rs.WriteTo(buf); err != nil {
		return nil, fmt.Errorf("encoding a record batch: %w", err)
	}
	return buf.Bytes(), nil
}

// encodedPool recycles the buffers of encoded batches: without it every batch allocates up to
// max.request.size, about a record's worth of garbage per record sent.
var encodedPool sync.Pool

// releaseEncoded returns an encoded batch's buffer to the pool. The caller guarantees that no request
// in flight or to come reads it.
func releaseEncoded(b []byte) {
	if cap(b) > 0 {
		encodedPool.Put(&b)
	}
}

// stampBatch sets the producer id, epoch and base sequence of an encoded batch and its CRC.
func stampBatch(b []byte, producerID int64, epoch int16, baseSequence int32) {
	binary.BigEndian.PutUint64(b[batchProducerIDAt:], uint64(producerID))
	binary.BigEndian.PutUint16(b[batchProducerEpochAt:], uint16(epoch))
	binary.BigEndian.PutUint32(b[batchBaseSequenceAt:], uint32(baseSequence))
	binary.BigEndian.PutUint32(b[batchCRCAt:], crc32.Checksum(b[batchAttributesAt:], castagnoli))
}

// recordWireSize estimates what r adds to a batch: its bytes plus the varints around them (a record's
// length, attributes, deltas, and each field's length), close to Java's estimate for batch.size.
func recordWireSize(r sink.Record) int64 {
	return recordSize(r) + 16 + 6*int64(len(r.Headers))
}

func estimatedSize(recs []sink.Record) int64 {
	var n int64
	for _, r := range recs {
		n += recordWireSize(r)
	}
	return n
}

// recordReader hands sink records to kafka-go's encoder without copying them into protocol.Records
// first: the encoder consumes each record before it asks for the next, so one Record and its two byte
// fields are reused.
type recordReader struct {
	recs       []sink.Record
	i          int
	rec        protocol.Record
	key, value byteField
	headers    []protocol.Header
}

func (r *recordReader) ReadRecord() (*protocol.Record, error) {
	if r.i == len(r.recs) {
		return nil, io.EOF
	}
	s := &r.recs[r.i]
	r.i++
	// A zero Time is stamped with the send time by the encoder, as the Java producer does.
	r.rec = protocol.Record{Offset: int64(r.i - 1), Time: s.Time}
	if s.Key != nil {
		r.key = byteField{b: s.Key}
		r.rec.Key = &r.key
	}
	if s.Value != nil {
		r.value = byteField{b: s.Value}
		r.rec.Value = &r.value
	}
	if len(s.Headers) > 0 {
		r.headers = r.headers[:0]
		for _, h := range s.Headers {
			r.headers = append(r.headers, protocol.Header{Key: h.Key, Value: h.Value})
		}
		r.rec.Headers = r.headers
	}
	return &r.rec, nil
}

// byteField is a protocol.Bytes over a slice it does not own.
type byteField struct {
	b   []byte
	off int
}

func (f *byteField) Len() int { return len(f.b) - f.off }

func (f *byteField) Read(p []byte) (int, error) {
	if f.off == len(f.b) {
		return 0, io.EOF
	}
	n := copy(p, f.b[f.off:])
	f.off += n
	return n, nil
}

// WriteTo lets io.Copy hand the slice to the encoder's writer in one call, rather than through the
// writer's ReadFrom: lz4's ReadFrom treats its source as a whole stream and breaks the batch.
func (f *byteField) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(f.b[f.off:])
	f.off += n
	return int64(n), err
}

func (f *byteField) Close() error { return nil }
