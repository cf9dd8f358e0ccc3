package props

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
)

// CommonRefused are the keys of Debezium's shared configuration (CommonConnectorConfig,
// RelationalDatabaseConnectorConfig and the keys it reads outside its ConfigDef, ExtraKeys) that neither of
// cdcd's connectors implements yet. A connector refuses them, with its own (Keys.Refused), unless they are at
// their default.
var CommonRefused = []string{
	"database.query.timeout.ms", "database.initial.statements",
	"snapshot.delay.ms", "streaming.delay.ms", "snapshot.max.threads.multiplier",
	"legacy.snapshot.max.threads", "internal.legacy.snapshot.max.threads", "snapshot.mode.custom.name",
	"snapshot.mode.configuration.based.snapshot.data", "snapshot.mode.configuration.based.snapshot.schema",
	"snapshot.mode.configuration.based.start.stream",
	"snapshot.mode.configuration.based.snapshot.on.schema.error",
	"snapshot.mode.configuration.based.snapshot.on.data.error", "retriable.restart.connector.wait.ms",
	"internal.log.position.check.enable",
	"executor.shutdown.timeout.ms", "openlineage.integration.enabled", "openlineage.integration.config.file.path",
	"openlineage.integration.job.namespace", "openlineage.integration.job.description",
	"openlineage.integration.job.tags", "openlineage.integration.job.owners",
	"openlineage.integration.dataset.kafka.bootstrap.servers", "extended.headers.enabled",
	"guardrail.collections.max", "guardrail.collections.limit.action", "custom.sanitize.pattern",
	"statistics.metrics.enabled", "snapshot.lock.timeout.ms", "memory.management.schemas.class",
	"memory.management.tables.class", "snapshot.query.mode", "snapshot.query.mode.custom.name",
	"snapshot.locking.mode.custom.name", "converters", "post.processors", "topic.naming.strategy",
	"transaction.metadata.factory",
	"custom.metric.tags", "table.ignore.builtin", "topic.cache.size", "event.converting.failure.handling.mode",
	"queue.provider.type", "skip.messages.without.change",
	"include.schema.comments", "internal.snapshot.scan.all.columns.force", "snapshot.tables.order.by.row.count",
	"sourceinfo.struct.maker",
}

// CommonFamilies are the prefixes under which Debezium's shared configuration reads keys it does not
// declare one by one: the JDBC driver's options (database.*, driver.*), the signal and notification
// channels' settings, per-table snapshot SELECTs, custom snapshotters' settings, OpenLineage's, and the
// column mappers' (source/columns). A connector honours or refuses every key under them.
var CommonFamilies = []string{"database.", "driver.", "signal.", "notification.", "snapshot.select.statement.overrides.",
	"snapshot.mode.", "snapshot.query.mode.", "snapshot.locking.mode.", "openlineage.integration.",
	"column.mask.", "column.truncate."}

// Heartbeat reads heartbeat.interval.ms and heartbeat.action.query. The query runs with every heartbeat, so
// one without heartbeats (an interval of 0, the default) would never run: it is refused.
func Heartbeat(p *Parser) (interval time.Duration, query string) {
	interval = p.Millis("heartbeat.interval.ms", 0)
	query = p.Str("heartbeat.action.query", "")
	if query != "" && interval == 0 {
		p.Fail("heartbeat.action.query", query, "it runs with every heartbeat, and heartbeat.interval.ms is 0 (no heartbeats): set heartbeat.interval.ms, or remove the query")
	}
	return interval, query
}

// SelectOverridesKey is Debezium's list of tables whose initial snapshot runs a SELECT of the user's; each
// listed table's statement is the key SelectOverridesKey + "." + the table as listed.
const SelectOverridesKey = "snapshot.select.statement.overrides"

// SelectOverrides reads SelectOverridesKey and its per-table statements: the statement by table as
// listed (schema.table, or database.schema.table). Debezium skips a listed table without a statement
// (with a warning) and ignores a statement whose table is not listed; both are refused here, naming the
// key, so that no statement is written and then silently not run.
func SelectOverrides(p *Parser) map[string]string {
	var listed []string
	for _, table := range strings.Split(p.Str(SelectOverridesKey, ""), ",") {
		if table = strings.TrimSpace(table); table != "" {
			listed = append(listed, table)
		}
	}
	statements := p.WithPrefix(SelectOverridesKey + ".")
	out := map[string]string{}
	for _, table := range listed {
		sql := strings.TrimSpace(statements[table])
		if sql == "" {
			p.Fail(SelectOverridesKey, strings.Join(listed, ","), "it lists "+table+", and "+SelectOverridesKey+"."+table+" gives no statement: set it to the SELECT to snapshot "+table+" with, or remove "+table+" from the list")
			continue
		}
		out[table] = sql
	}
	for _, table := range slices.Sorted(maps.Keys(statements)) {
		if !slices.Contains(listed, table) {
			p.Fail(SelectOverridesKey+"."+table, statements[table], "the statement runs only for a table "+SelectOverridesKey+" lists: add "+table+" to it, or remove the key")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// OverrideColumns maps the columns a user's SELECT (SelectOverridesKey) returns onto the table's columns,
// by name and ignoring case as Debezium's ColumnUtils.toArray does: the returned func puts a result row's
// values in the table's order, with the zero V (NULL) for the columns the statement leaves out. A returned
// column the table does not have is an error naming it, the key and the table.
func OverrideColumns[V any](returned, columns []string, listedAs, table string) (func([]V) []V, error) {
	at := make([]int, len(returned))
	for i, name := range returned {
		at[i] = slices.IndexFunc(columns, func(c string) bool { return strings.EqualFold(c, name) })
		if at[i] < 0 {
			return nil, fmt.Errorf("%s.%s returns column %q, which %s does not have: select the table's columns only",
				SelectOverridesKey, listedAs, name, table)
		}
	}
	return func(values []V) []V {
		out := make([]V, len(columns))
		for i, v := range values {
			if i < len(at) {
				out[at[i]] = v
			}
		}
		return out
	}, nil
}

// The values of event.processing.failure.handling.mode (EventProcessingFailureHandlingMode).
const (
	EventFailureFail   = "fail"
	EventFailureWarn   = "warn"
	EventFailureSkip   = "skip"
	EventFailureIgnore = "ignore" // Debezium's older name of skip
)

// SkipUnprocessable applies event.processing.failure.handling.mode to a change that cannot be processed:
// under warn (logged as a warning) or skip (at debug level) it logs the change with attrs, which name its
// table, position and error, and reports true; under fail it reports false, and the caller fails the
// stream naming the position.
func SkipUnprocessable(mode string, log *slog.Logger, attrs ...any) bool {
	switch mode {
	case EventFailureWarn:
		log.Warn("skipping a change that cannot be processed (event.processing.failure.handling.mode=warn)", attrs...)
	case EventFailureSkip, EventFailureIgnore:
		log.Debug("skipping a change that cannot be processed (event.processing.failure.handling.mode=skip)", attrs...)
	default:
		return false
	}
	return true
}

// EventFailureMode reads event.processing.failure.handling.mode: what the connector does with a change it
// cannot turn into an event.
func EventFailureMode(p *Parser) string {
	return p.OneOf("event.processing.failure.handling.mode", EventFailureFail, EventFailureFail, EventFailureWarn, EventFailureSkip, EventFailureIgnore)
}
