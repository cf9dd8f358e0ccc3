package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/source"
)

// StreamParam is one pgoutput option of slot.stream.params, added to START_REPLICATION after cdcd's own.
type StreamParam struct{ Name, Value string }

// originSince is the first server_version_num whose pgoutput reads the origin option.
const originSince = 160000

// parseStreamParams reads slot.stream.params as Debezium does, name=value pairs separated by ';', and
// refuses what cdcd cannot honour. Debezium passes every pair to the plugin and logs and drops a pair
// without '='; cdcd refuses both that and every pgoutput option but origin. It sets proto_version,
// publication_names and messages itself, and binary, streaming and two_phase change the messages the
// plugin sends into ones cdcd does not decode. An unknown name would fail only at START_REPLICATION.
func parseStreamParams(text string) ([]StreamParam, string) {
	var params []StreamParam
	for pair := range strings.SplitSeq(text, ";") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "":
			return nil, fmt.Sprintf("%q is not name=value: write the pgoutput options as name=value pairs separated by ';' (origin=none)", pair)
		case name == "proto_version" || name == "publication_names" || name == "messages":
			return nil, fmt.Sprintf("cdcd sets the pgoutput option %s itself (publication_names from publication.name, messages from the server's version): remove it", name)
		case name == "binary" || name == "streaming" || name == "two_phase":
			return nil, fmt.Sprintf("the pgoutput option %s changes the messages the plugin sends into ones cdcd does not decode: remove it", name)
		case name != "origin":
			return nil, fmt.Sprintf("%s is not a pgoutput option cdcd passes on; the one it does is origin (none or any, PostgreSQL 16 and later)", name)
		case !strings.EqualFold(value, "none") && !strings.EqualFold(value, "any"):
			return nil, fmt.Sprintf("origin=%s: pgoutput's origin is none (only changes made on this server, not those a subscription applied) or any", value)
		}
		params = append(params, StreamParam{Name: name, Value: strings.ToLower(value)})
	}
	return params, ""
}

// streamParamArgs are slot.stream.params as START_REPLICATION's plugin options.
func (c *Config) streamParamArgs() []string {
	args := make([]string, 0, len(c.StreamParams))
	for _, p := range c.StreamParams {
		args = append(args, pluginOption(p.Name, p.Value))
	}
	return args
}

// checkStreamParams refuses slot.stream.params the server's pgoutput does not read, naming its version:
// the server would refuse it only at START_REPLICATION, as "unrecognized pgoutput option".
func checkStreamParams(versionNum int, cfg *Config) error {
	for _, p := range cfg.StreamParams {
		if p.Name == "origin" && versionNum < originSince {
			return source.Fatal(fmt.Errorf("slot.stream.params origin=%s needs PostgreSQL 16 or newer, and the server at %s is PostgreSQL %s: remove it",
				p.Value, cfg.addr(), versionString(versionNum)))
		}
	}
	return nil
}

// slotXmin tracks the slot's catalog_xmin for source.xmin and the offset's xmin (xmin.fetch.interval.ms),
// read again once the interval has passed, as Debezium's PostgresStreamingChangeEventSource reads it. The
// stream's goroutine owns it, and reads on that goroutine's SQL connection.
type slotXmin struct {
	every     time.Duration // 0: not tracked, source.xmin stays null
	value     int64         // 0: not read yet, or the slot has no catalog_xmin
	fetchedAt time.Time
}

// at returns the catalog_xmin to show now, reading it when the interval has passed. Debezium reads it at
// every message; cdcd at each BEGIN, so all of a transaction's events and its commit's offset carry the
// same value.
func (x *slotXmin) at(ctx context.Context, sql *pgx.Conn, cfg *Config, now time.Time) (int64, error) {
	if x.every <= 0 || (x.value != 0 && now.Sub(x.fetchedAt) < x.every) {
		return x.value, nil
	}
	var xmin *int64
	err := sql.QueryRow(ctx, "SELECT catalog_xmin::text::bigint FROM pg_replication_slots WHERE slot_name = $1 AND database = $2 AND plugin = 'pgoutput'",
		cfg.SlotName, cfg.DBName).Scan(&xmin)
	if err != nil {
		return 0, fmt.Errorf("reading the catalog_xmin of slot %q (xmin.fetch.interval.ms): %w", cfg.SlotName, err)
	}
	x.fetchedAt = now
	if xmin != nil {
		x.value = *xmin
	}
	return x.value, nil
}
