package postgres

import (
	"fmt"
	"time"

	"github.com/cdcd/cdcd/source"
)

// What cdcd sends depends on the server's version, read once per connection (checkServer): an option or a
// catalog column the server does not know fails the statement, so none is sent to a version without it.
//
//	13  the oldest supported (wal_status, pubviaroot); pgoutput has no logical decoding messages, and
//	    refuses the messages option ("unrecognized pgoutput option: messages")
//	14  pgoutput's messages option (logical decoding messages in the stream), protocol 2 (streaming of
//	    in-progress transactions) and two_phase slots
//	15  protocol 3 (two-phase transactions); empty transactions are no longer sent
//	16  logical decoding on standbys; protocol 4 (parallel streaming)
//	17  failover slots (FAILOVER, pg_replication_slots.failover and synced)
//
// cdcd speaks pgoutput protocol 1, as Debezium does, which every supported version serves; large
// transactions arrive whole at their commit.

// minServerVersion is the oldest server_version_num cdcd streams from.
const minServerVersion = 130000

// standbyDecodingSince is the first server_version_num that decodes (and creates logical slots) on a
// hot standby.
const standbyDecodingSince = 160000

// messagesSince is the first server_version_num whose pgoutput takes the messages option.
const messagesSince = 140000

// serverInfo is what the reader learned of its server when it connected.
type serverInfo struct {
	versionNum    int           // server_version_num: 130022 for 13.22, 180000 for 18.0
	senderTimeout time.Duration // wal_sender_timeout; 0: disabled
	standby       bool          // pg_is_in_recovery(): a hot standby, which decodes from 16 on and takes no writes
}

// pluginArgs are the pgoutput options that depend on the version, after proto_version and
// publication_names: without messages 'true' a server of 14 or later drops logical decoding messages.
func (s serverInfo) pluginArgs() []string {
	if s.versionNum >= messagesSince {
		return []string{"messages 'true'"}
	}
	return nil
}

// versionString renders server_version_num as PostgreSQL numbers its releases: 13.22, 18.0, 9.6.24.
func versionString(num int) string {
	if num >= 100000 {
		return fmt.Sprintf("%d.%d", num/10000, num%10000)
	}
	return fmt.Sprintf("%d.%d.%d", num/10000, num/100%100, num%100)
}

// checkVersion refuses a server older than cdcd supports, naming its version.
func checkVersion(num int, addr string) error {
	if num >= minServerVersion {
		return nil
	}
	return source.Fatal(fmt.Errorf("PostgreSQL %s at %s is not supported; cdcd needs 13 or newer", versionString(num), addr))
}
