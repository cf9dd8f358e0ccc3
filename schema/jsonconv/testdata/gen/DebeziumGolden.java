// DebeziumGolden renders schemas and names built by Debezium 3.6.1.Final itself: the change-event envelope
// with the PostgreSQL source block, the heartbeat, transaction-metadata and logical-message records
// (through Kafka Connect's JsonConverter), and topic / schema name sanitising. Run it with gen.sh.
//
// debezium_golden.tsv lines: "<case>\t<JsonConverter output as base64>".
// debezium_names.tsv lines: "<function>\t<input as base64>\t<output as base64>".
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

import io.debezium.config.CommonConnectorConfig.BinaryHandlingMode;
import io.debezium.config.Configuration;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.debezium.connector.postgresql.PostgresSchemaFactory;
import io.debezium.data.Envelope;
import io.debezium.schema.SchemaFactory;
import io.debezium.schema.SchemaNameAdjuster;
import io.debezium.schema.SchemaTopicNamingStrategy;

public class DebeziumGolden {
    static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    static String b64(String s) {
        return b64(s.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        PostgresConnectorConfig config = new PostgresConnectorConfig(Configuration.create()
                .with("topic.prefix", "pg1").with("database.hostname", "localhost")
                .with("database.user", "u").with("database.dbname", "app").build());
        JsonConverter conv = new JsonConverter();
        conv.configure(Map.of(), false);

        try (PrintWriter out = new PrintWriter(args[0], "UTF-8")) {
            Schema source = config.getSourceInfoStructMaker().schema();
            Schema row = SchemaBuilder.struct().name("pg1.public.customers.Value")
                    .field("id", SchemaBuilder.int32().defaultValue(0).build())
                    .field("email", Schema.STRING_SCHEMA)
                    .optional().build();
            Schema envelope = Envelope.defineSchema()
                    .withName("pg1.public.customers.Envelope")
                    .withRecord(row)
                    .withSource(source)
                    .withTransaction(config.getTransactionMetadataFactory().getTransactionStructMaker().getTransactionBlockSchema())
                    .build().schema();
            Struct src = new Struct(source).put("version", "3.6.1.Final").put("connector", "postgresql").put("name", "pg1")
                    .put("ts_ms", 1700000000123L).put("db", "app").put("sequence", "[\"24023119\",\"24023128\"]")
                    .put("ts_us", 1700000000123456L).put("ts_ns", 1700000000123456000L).put("schema", "public")
                    .put("table", "customers").put("txId", 555L).put("lsn", 24023128L);
            Struct value = new Struct(envelope).put("after", new Struct(row).put("id", 1).put("email", "a@b.c"))
                    .put("source", src).put("op", "c").put("ts_ms", 1700000000200L).put("ts_us", 1700000000200111L)
                    .put("ts_ns", 1700000000200111222L);
            out.printf("envelope_create\t%s%n", b64(conv.fromConnectData("t", envelope, value)));

            SchemaNameAdjuster noop = SchemaNameAdjuster.NO_OP;
            Schema hbKey = SchemaFactory.get().heartbeatKeySchema(noop);
            Schema hbValue = SchemaFactory.get().heartbeatValueSchema(noop);
            out.printf("heartbeat_key\t%s%n", b64(conv.fromConnectData("t", hbKey, new Struct(hbKey).put("serverName", "pg1"))));
            out.printf("heartbeat_value\t%s%n", b64(conv.fromConnectData("t", hbValue, new Struct(hbValue).put("ts_ms", 1700000000000L))));

            Schema txKey = SchemaFactory.get().transactionKeySchema(noop);
            Schema txValue = SchemaFactory.get().transactionValueSchema(noop);
            Schema perTable = SchemaFactory.get().transactionEventCountPerDataCollectionSchema();
            out.printf("transaction_key\t%s%n", b64(conv.fromConnectData("t", txKey, new Struct(txKey).put("id", "571:53195829"))));
            out.printf("transaction_begin\t%s%n", b64(conv.fromConnectData("t", txValue, new Struct(txValue)
                    .put("status", "BEGIN").put("id", "571:53195829").put("ts_ms", 1486500577125L))));
            out.printf("transaction_end\t%s%n", b64(conv.fromConnectData("t", txValue, new Struct(txValue)
                    .put("status", "END").put("id", "571:53195832").put("event_count", 2L).put("ts_ms", 1486500577691L)
                    .put("data_collections", java.util.List.of(
                            new Struct(perTable).put("data_collection", "s1.a").put("event_count", 1L),
                            new Struct(perTable).put("data_collection", "s2.a").put("event_count", 1L))))));

            Schema msgKey = PostgresSchemaFactory.get().logicalDecodingMessageMonitorKeySchema(noop);
            out.printf("message_key\t%s%n", b64(conv.fromConnectData("t", msgKey, new Struct(msgKey).put("prefix", "pfx"))));
            for (BinaryHandlingMode mode : new BinaryHandlingMode[]{BinaryHandlingMode.BYTES, BinaryHandlingMode.BASE64}) {
                Schema msgValue = PostgresSchemaFactory.get().logicalDecodingMessageMonitorValueSchema(noop, config, mode);
                Schema block = msgValue.field("message").schema();
                Object content = mode == BinaryHandlingMode.BYTES ? (Object) new byte[]{1, 2, 3} : "AQID";
                Struct msrc = new Struct(source).put("version", "3.6.1.Final").put("connector", "postgresql").put("name", "pg1")
                        .put("ts_ms", 1L).put("db", "app").put("schema", "").put("table", "").put("lsn", 5L);
                out.printf("message_value_%s\t%s%n", mode.getValue(), b64(conv.fromConnectData("t", msgValue, new Struct(msgValue)
                        .put("op", "m").put("ts_ms", 2L).put("source", msrc)
                        .put("message", new Struct(block).put("prefix", "pfx").put("content", content)))));
            }
        }

        Properties props = new Properties();
        props.put("topic.prefix", "pg1");
        SchemaTopicNamingStrategy topics = new SchemaTopicNamingStrategy(props);
        String[] names = {"pg1.public.customers", "pg1.my schema.tab$le", "pg1.é😀", ".", "..", "...", "a".repeat(260),
            "ok-name_1.x", "1abc", "_x", "9.public.t", "a-b", "\u0663x", "x\u0100y", "ÿ", "a.b-c"};
        try (PrintWriter out = new PrintWriter(args[1], "UTF-8")) {
            for (String n : names) {
                out.printf("topic\t%s\t%s%n", b64(n), b64(topics.sanitizedTopicName(n)));
                out.printf("avro\t%s\t%s%n", b64(n), b64(SchemaNameAdjuster.validFullname(n, io.debezium.spi.common.ReplacementFunction.UNDERSCORE_REPLACEMENT)));
                out.printf("avro_unicode\t%s\t%s%n", b64(n), b64(SchemaNameAdjuster.validFullname(n, new io.debezium.schema.UnicodeReplacementFunction())));
                out.printf("field_avro\t%s\t%s%n", b64(n), b64(SchemaNameAdjuster.validFullname(n, new io.debezium.schema.FieldNameUnderscoreReplacementFunction())));
                out.printf("field_avro_unicode\t%s\t%s%n", b64(n), b64(SchemaNameAdjuster.validFullname(n, new io.debezium.schema.FieldNameUnicodeReplacementFunction())));
            }
        }
    }
}
