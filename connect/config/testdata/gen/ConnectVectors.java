// Generates the Kafka Connect vectors under connect/config/testdata from the
// real Kafka 4.4 classes (connect-runtime, kafka-clients and Jackson on the
// class path, e.g. the jars e2e/debezium resolves). Run from connect/config:
//
//	java -cp 'LIBS/*' testdata/gen/ConnectVectors.java
//
// It writes parse_type.jsonl (ConfigDef.parseType and validator messages),
// configinfos.json (AbstractHerder.generateResult serialised by Jackson) and
// connector_files.jsonl (ConnectStandalone.parseConnectorConfigurationFile).
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.AbstractHerder;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest;

import java.io.*;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class ConnectVectors {
    static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        parseTypeVectors();
        configInfosVector();
        connectorFileVectors();
    }

    static void parseTypeVectors() throws Exception {
        String[] raws = {"", " ", "0", "1", "-1", "+7", " 42 ", "2147483647", "2147483648", "-32768", "32768",
            "9223372036854775807", "9223372036854775808", "1.5", "1e3", "1E-5", "12345678.9", "0.001", "0.0001",
            "NaN", "-Infinity", "infinity", "0x1p3", "1.5d", "2f", "1_000", "abc", "true", "TRUE", " False ", "yes",
            "a,b", " a , b ,", ",", "a,,b", "org.apache.kafka.connect.json.JsonConverter", " secret "};
        Type[] types = {Type.BOOLEAN, Type.STRING, Type.INT, Type.SHORT, Type.LONG, Type.DOUBLE, Type.LIST, Type.PASSWORD};
        try (PrintStream out = new PrintStream(new FileOutputStream("testdata/parse_type.jsonl"), true, "UTF-8")) {
            for (Type t : types) {
                for (String raw : raws) {
                    String line;
                    try {
                        Object v = ConfigDef.parseType("x", raw, t);
                        line = "{\"type\":" + q(t.name()) + ",\"raw\":" + q(raw) + ",\"value\":" + q(ConfigDef.convertToString(v, t)) + "}";
                    } catch (ConfigException e) {
                        line = "{\"type\":" + q(t.name()) + ",\"raw\":" + q(raw) + ",\"error\":" + q(e.getMessage()) + "}";
                    }
                    out.println(line);
                }
            }
            // Validators on values that parse.
            Object[][] checks = {
                {"atLeast1", ConfigDef.Range.atLeast(1), Type.INT, "0"},
                {"atLeast1", ConfigDef.Range.atLeast(1), Type.LONG, "5"},
                {"between0and10", ConfigDef.Range.between(0, 10), Type.INT, "11"},
                {"between0and10", ConfigDef.Range.between(0, 10), Type.SHORT, "-1"},
                {"validString", ConfigDef.ValidString.in("a", "b"), Type.STRING, "A"},
                {"caseInsensitive", ConfigDef.CaseInsensitiveValidString.in("a", "b"), Type.STRING, "A"},
                {"caseInsensitive", ConfigDef.CaseInsensitiveValidString.in("a", "b"), Type.STRING, "c"},
                {"nonEmpty", new ConfigDef.NonEmptyString(), Type.STRING, "  "},
            };
            for (Object[] c : checks) {
                Type t = (Type) c[2];
                Object v = ConfigDef.parseType("x", c[3], t);
                String err = "";
                try {
                    ((ConfigDef.Validator) c[1]).ensureValid("x", v);
                } catch (ConfigException e) {
                    err = e.getMessage();
                }
                out.println("{\"validator\":" + q((String) c[0]) + ",\"type\":" + q(t.name()) + ",\"raw\":" + q((String) c[3]) + ",\"error\":" + q(err) + "}");
            }
        }
    }

    // The definitions mirrored by configInfosDefs in configinfos_test.go.
    static void configInfosVector() throws Exception {
        ConfigDef def = new ConfigDef()
            .define("topic.prefix", Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                "Topic prefix.", "Connection", 1, Width.MEDIUM, "Topic prefix", List.of("slot.name"))
            .define("slot.name", Type.STRING, "debezium", Importance.MEDIUM, "Slot name.", "Connection", 2, Width.MEDIUM, "Slot")
            .define("database.password", Type.PASSWORD, ConfigDef.NO_DEFAULT_VALUE, Importance.HIGH, "Password.", "Connection", 3, Width.SHORT, "Password")
            .define("snapshot.fetch.size", Type.INT, 10240, ConfigDef.Range.atLeast(1), Importance.MEDIUM, "Fetch size.", "Advanced", 1, Width.SHORT, "Fetch")
            .define("poll.interval.ms", Type.LONG, 500L, Importance.LOW, "Poll interval.")
            .define("table.include.list", Type.LIST, null, Importance.HIGH, "Tables.", "Filters", 1, Width.LONG, "Tables")
            .define("tombstones.on.delete", Type.BOOLEAN, true, Importance.LOW, "Tombstones.", "Advanced", 2, Width.SHORT, "Tombstones")
            .define("heartbeat.ratio", Type.DOUBLE, 0.5, Importance.LOW, "Ratio.", "Advanced", 3, Width.SHORT, "Ratio")
            .define("snapshot.mode", Type.STRING, "initial", ConfigDef.CaseInsensitiveValidString.in("initial", "never"), Importance.LOW, "Mode.", "Advanced", 4, Width.SHORT, "Mode");
        Map<String, String> props = new LinkedHashMap<>();
        props.put("slot.name", " myslot ");
        props.put("database.password", "s3cret");
        props.put("snapshot.fetch.size", "0");
        props.put("poll.interval.ms", "soon");
        props.put("table.include.list", "public.a, public.b");
        props.put("snapshot.mode", "ALWAYS");
        List<ConfigValue> values = new ArrayList<>(def.validateAll(props).values());
        ConfigInfos infos = AbstractHerder.generateResult("io.debezium.connector.postgresql.PostgresConnector",
            new LinkedHashMap<>(def.configKeys()), values, def.groups());
        Files.writeString(Paths.get("testdata/configinfos.json"), MAPPER.writeValueAsString(infos) + "\n");
    }

    static void connectorFileVectors() throws Exception {
        ConnectStandalone cli = new ConnectStandalone();
        Method parse = ConnectStandalone.class.getDeclaredMethod("parseConnectorConfigurationFile", String.class);
        parse.setAccessible(true);
        File[] files = new File("testdata/connectorfiles").listFiles();
        Arrays.sort(files);
        try (PrintStream out = new PrintStream(new FileOutputStream("testdata/connector_files.jsonl"), true, "UTF-8")) {
            for (File f : files) {
                String path = "testdata/connectorfiles/" + f.getName();
                String line;
                try {
                    CreateConnectorRequest r = (CreateConnectorRequest) parse.invoke(cli, path);
                    TreeMap<String, String> cfg = new TreeMap<>(r.config());
                    line = "{\"file\":" + q(path) + ",\"name\":" + q(r.name()) + ",\"config\":" + MAPPER.writeValueAsString(cfg)
                        + ",\"initial_state\":" + q(r.initialState() == null ? "" : r.initialState().name()) + "}";
                } catch (java.lang.reflect.InvocationTargetException e) {
                    line = "{\"file\":" + q(path) + ",\"error\":" + q(e.getCause().getMessage()) + "}";
                }
                out.println(line);
            }
        }
    }

    static String q(String s) throws IOException {
        return MAPPER.writeValueAsString(s);
    }
}
