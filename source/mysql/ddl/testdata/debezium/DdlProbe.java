// DdlProbe runs Debezium's MariaDB or MySQL DDL parser (argument "mariadb" or "mysql") over a sequence of
// statements (one catalog, in order) and prints, for each, the schema changes Debezium's
// BinlogDatabaseSchema.parseDdl records: one JSON line per statement.
// Input: JSON lines {"db": default database, "ddl": statement, "mariadb_only": true for MariaDB syntax the
// MySQL parser is not given}. Used by gen.sh to write the parser goldens.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.antlr.AntlrDdlParser;
import io.debezium.document.Array;
import io.debezium.document.Document;
import io.debezium.document.DocumentWriter;
import io.debezium.relational.Table;
import io.debezium.relational.TableId;
import io.debezium.relational.Tables;
import io.debezium.relational.ddl.DdlChanges;
import io.debezium.relational.ddl.DdlParserListener;
import io.debezium.relational.history.JsonTableChangeSerializer;
import io.debezium.relational.history.TableChanges;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class DdlProbe {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        boolean mysql = args.length > 0 && args[0].equals("mysql");
        String pkg = mysql ? "io.debezium.connector.mysql." : "io.debezium.connector.mariadb.";
        Class<?> parserClass = Class.forName(pkg + "antlr." + (mysql ? "MySqlAntlrDdlParser" : "MariaDbAntlrDdlParser"));
        Class<?> registryClass = Class.forName(pkg + "charset." + (mysql ? "MySqlCharsetRegistry" : "MariaDbCharsetRegistry"));
        Class<?> registryInterface = Class.forName("io.debezium.connector.binlog.charset.BinlogCharsetRegistry");
        AntlrDdlParser<?, ?> parser = (AntlrDdlParser<?, ?>) parserClass
                .getConstructor(boolean.class, boolean.class, boolean.class, Tables.TableFilter.class, registryInterface)
                .newInstance(true, false, false, Tables.TableFilter.includeAll(), registryClass.getConstructor().newInstance());
        Tables tables = new Tables();
        JsonTableChangeSerializer serializer = new JsonTableChangeSerializer();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode input = mapper.readTree(line);
            if (mysql && input.path("mariadb_only").asBoolean()) {
                continue;
            }
            String db = input.get("db").asText();
            String ddl = input.get("ddl").asText();
            Document out = Document.create();
            out.setString("db", db);
            out.setString("ddl", ddl);
            List<Document> changes = new ArrayList<>();
            try {
                parser.setCurrentSchema(db);
                DdlChanges ddlChanges = parser.parse(ddl, tables);
                if (ddlChanges.isEmpty()) {
                    changes.add(change("DATABASE", db, ddl, new TableChanges(), serializer));
                }
                else {
                    ddlChanges.getEventsByDatabase((String dbName, List<DdlParserListener.Event> events) -> {
                        String database = dbName == null ? "" : dbName;
                        for (DdlParserListener.Event event : events) {
                            TableChanges tc = new TableChanges();
                            String type;
                            if (event instanceof DdlParserListener.TableCreatedEvent) {
                                type = "CREATE";
                                Table t = tables.forTable(((DdlParserListener.TableEvent) event).tableId());
                                if (t != null) {
                                    tc.create(t);
                                }
                            }
                            else if (event instanceof DdlParserListener.TableAlteredEvent) {
                                type = "ALTER";
                                DdlParserListener.TableAlteredEvent altered = (DdlParserListener.TableAlteredEvent) event;
                                Table t = tables.forTable(altered.tableId());
                                if (t != null) {
                                    if (altered.previousTableId() != null) {
                                        tc.rename(t, altered.previousTableId());
                                    }
                                    else {
                                        tc.alter(t);
                                    }
                                }
                            }
                            else if (event instanceof DdlParserListener.TableIndexCreatedEvent) {
                                type = "ALTER";
                                Table t = tables.forTable(((DdlParserListener.TableIndexEvent) event).tableId());
                                if (t != null) {
                                    tc.alter(t);
                                }
                            }
                            else if (event instanceof DdlParserListener.TableDroppedEvent) {
                                type = "DROP";
                                tc.drop(((DdlParserListener.TableEvent) event).tableId());
                            }
                            else if (event instanceof DdlParserListener.TableTruncatedEvent) {
                                type = "TRUNCATE";
                            }
                            else if (event instanceof DdlParserListener.SetVariableEvent) {
                                if (((DdlParserListener.SetVariableEvent) event).order() != 0) {
                                    continue;
                                }
                                type = "DATABASE";
                            }
                            else {
                                type = "DATABASE";
                            }
                            Document c = change(type, database, event.statement(), tc, serializer);
                            if (event instanceof DdlParserListener.TableEvent) {
                                TableId id = ((DdlParserListener.TableEvent) event).tableId();
                                c.setString("id", id.toDoubleQuotedString());
                            }
                            changes.add(c);
                        }
                    });
                }
                out.setArray("changes", Array.create(changes));
            }
            catch (Exception e) {
                out.setString("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                // a failed statement stops a real connector; here its half-signalled events must not leak
                // into the next statement's changes
                parser.getAndResetDdlChanges();
            }
            System.out.println(DocumentWriter.defaultWriter().write(out));
        }
    }

    private static Document change(String type, String database, String ddl, TableChanges tc, JsonTableChangeSerializer serializer) {
        Document c = Document.create();
        c.setString("type", type);
        c.setString("database", database);
        c.setString("ddl", ddl);
        c.setArray("tableChanges", serializer.serialize(tc));
        return c;
    }
}
