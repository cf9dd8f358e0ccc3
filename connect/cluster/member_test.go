package cluster

import (
	"bytes"
	"encoding/binary"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
)

// TestKafkaGoMisplacesGroupErrorCodes decodes Heartbeat and LeaveGroup responses as a broker sends
// them (version 4, throttle_time_ms before error_code) with kafka-go, and checks that
// misplacedErrorCode recovers the error code. A throttle of 65538 ms puts non-zero bytes on both
// sides of the misplaced split. If this fails after a kafka-go upgrade, kafka-go decodes these
// responses in Kafka's order now: drop misplacedErrorCode and use the responses' ErrorCode.
func TestKafkaGoMisplacesGroupErrorCodes(t *testing.T) {
	const throttle, code = 65538, int16(kafkago.RebalanceInProgress)
	body := func(rest ...byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, 7) // correlation id
		b = append(b, 0)                           // no tagged fields in the response header
		b = binary.BigEndian.AppendUint32(b, throttle)
		b = binary.BigEndian.AppendUint16(b, uint16(code))
		return append(b, rest...)
	}
	framed := func(b []byte) *bytes.Reader {
		return bytes.NewReader(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	}

	_, msg, err := protocol.ReadResponse(framed(body(0)), protocol.Heartbeat, 4)
	if err != nil {
		t.Fatal(err)
	}
	hb := msg.(*heartbeat.Response)
	if got := misplacedErrorCode(hb.ThrottleTimeMs); got != code {
		t.Errorf("heartbeat: recovered error code %d, want %d (kafka-go decoded %+v)", got, code, hb)
	}

	member := []byte{2, 'm', 0} // one member: compact string "m", null instance id
	member = binary.BigEndian.AppendUint16(member, uint16(kafkago.UnknownMemberId))
	member = append(member, 0) // the member's tagged fields
	_, msg, err = protocol.ReadResponse(framed(body(append(append([]byte{2}, member...), 0)...)), protocol.LeaveGroup, 4)
	if err != nil {
		t.Fatal(err)
	}
	leave := msg.(*leavegroup.Response)
	if got := misplacedErrorCode(leave.ThrottleTimeMS); got != code {
		t.Errorf("leave group: recovered error code %d, want %d (kafka-go decoded %+v)", got, code, leave)
	}
	if len(leave.Members) != 1 || leave.Members[0].ErrorCode != int16(kafkago.UnknownMemberId) {
		t.Errorf("leave group: members %+v, want one with UNKNOWN_MEMBER_ID", leave.Members)
	}
}
