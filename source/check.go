package source

import "context"

// ConnectionChecker is a Task that can check, before it runs, that its database answers and lets it
// read: what Debezium's connectors' validate() does when a connector is created, changed or validated
// (PostgreSQL: connect and check the user's replication privilege; MySQL and MariaDB: connect and check
// the binlog settings and the replication privileges). Optional; the runtime calls it only on a config
// that has no other error.
type ConnectionChecker interface {
	// CheckConnection connects to the database, checks what reading needs, and disconnects. It blocks
	// until then or until ctx ends (the runtime bounds ctx with connection.validation.timeout.ms); an
	// error names the server (host:port) and the reason, and carries no secret. It changes nothing on
	// the server (no slot, no publication). Safe for concurrent calls, also while the task runs.
	CheckConnection(ctx context.Context) error
}
