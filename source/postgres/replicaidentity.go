package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/props"
)

// replicaIdentityRule is one entry of replica.identity.autoset.values: the captured tables whose
// schema.table its expression matches (whole, ignoring case, as Debezium's predicates match) get the
// replica identity.
type replicaIdentityRule struct {
	text     string // as written, for messages
	tables   *regexp.Regexp
	identity string // DEFAULT, FULL, NOTHING or INDEX
	index    string // the index of INDEX
}

// replicaIdentityEntry is Debezium's REPLICA_AUTO_SET_PATTERN.
var replicaIdentityEntry = regexp.MustCompile(`(?i)^\s*([^\s:]+):(DEFAULT|INDEX (\w+)|FULL|NOTHING)\s*$`)

// parseReplicaIdentities reads replica.identity.autoset.values: comma-separated <table expression>:<replica
// identity> entries, refused by entry when one is not of that form.
func parseReplicaIdentities(p *props.Parser) []replicaIdentityRule {
	text := p.Str("replica.identity.autoset.values", "")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var rules []replicaIdentityRule
	for _, entry := range strings.Split(text, ",") {
		m := replicaIdentityEntry.FindStringSubmatch(entry)
		if m == nil {
			p.Fail("replica.identity.autoset.values", text, fmt.Sprintf("%q is not <schema.table expression>:<DEFAULT, FULL, NOTHING or INDEX index_name>", strings.TrimSpace(entry)))
			continue
		}
		tables, err := regexp.Compile("(?i)^(?:" + m[1] + ")$")
		if err != nil {
			p.Fail("replica.identity.autoset.values", text, fmt.Sprintf("%q is not a regular expression: %v", m[1], err))
			continue
		}
		identity := strings.ToUpper(m[2])
		if m[3] != "" {
			identity = "INDEX"
		}
		rules = append(rules, replicaIdentityRule{text: strings.TrimSpace(entry), tables: tables, identity: identity, index: m[3]})
	}
	return rules
}

// clause is the rule's ALTER TABLE … REPLICA IDENTITY clause.
func (r replicaIdentityRule) clause() string {
	if r.identity == "INDEX" {
		return "USING INDEX " + pgx.Identifier{r.index}.Sanitize()
	}
	return r.identity
}

// setReplicaIdentities gives each captured table the replica identity replica.identity.autoset.values
// names for it, as Debezium does when streaming starts, before the publication is made (a filtered one
// checks the identities). Unlike Debezium, which logs a failure and streams on, a table that cannot be
// altered (no privilege, no such index) or that two entries match stops the start naming the table and the
// fix: the identity decides which old values the events carry.
func setReplicaIdentities(ctx context.Context, conn *pgx.Conn, cfg *Config, log *slog.Logger) error {
	if len(cfg.ReplicaIdentities) == 0 {
		return nil
	}
	type table struct{ id, quoted string }
	var tables []table
	if _, err := queryTables(ctx, conn, cfg.Filter.IncludeTable, func(s, t string) string {
		tables = append(tables, table{s + "." + t, quotedName(s, t)})
		return ""
	}, false); err != nil {
		return err
	}
	for _, t := range tables {
		var matched []replicaIdentityRule
		for _, r := range cfg.ReplicaIdentities {
			if r.tables.MatchString(t.id) {
				matched = append(matched, r)
			}
		}
		switch {
		case len(matched) == 0:
			continue
		case len(matched) > 1:
			return source.Fatal(fmt.Errorf("replica.identity.autoset.values: table %s matches both %q and %q; make the expressions match each table once", t.id, matched[0].text, matched[1].text))
		}
		want := matched[0]
		var current, index string
		if err := conn.QueryRow(ctx, `SELECT c.relreplident::text, coalesce((SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
			WHERE x.indrelid = c.oid AND x.indisreplident), '') FROM pg_class c WHERE c.oid = $1::regclass`, t.quoted).Scan(&current, &index); err != nil {
			return fmt.Errorf("reading the replica identity of %s: %w", t.id, err)
		}
		if identityNames[current] == want.identity && (want.identity != "INDEX" || index == want.index) {
			continue
		}
		if _, err := conn.Exec(ctx, "ALTER TABLE "+t.quoted+" REPLICA IDENTITY "+want.clause()); err != nil {
			return source.Fatal(fmt.Errorf("replica.identity.autoset.values: ALTER TABLE %s REPLICA IDENTITY %s failed (the connector's user must own the table; an index must be unique, not partial, on NOT NULL columns): %w", t.id, want.clause(), err))
		}
		log.Info("replica identity set (replica.identity.autoset.values)", "table", t.id, "identity", want.clause(), "was", identityNames[current])
	}
	return nil
}

// identityNames are pg_class.relreplident's codes by the names of replica.identity.autoset.values.
var identityNames = map[string]string{"d": "DEFAULT", "f": "FULL", "n": "NOTHING", "i": "INDEX"}
