// Checks cdcd's offsets formats against Kafka Connect itself. Needs the Kafka
// Connect runtime on the class path (connect-runtime, connect-json,
// connect-api, kafka-clients, Jackson, slf4j):
//
//   java -cp 'LIBS/*' ConnectInterop.java json CASES
//       CASES has lines "connector TAB partition-json TAB offset-json" whose
//       objects list fields in put order. For each line the maps are rebuilt
//       as Debezium builds them (new HashMap<>(), one put per field) and the
//       offset key and value JsonConverter writes are printed as
//       "KEYHEX VALUEHEX".
//
//   java -cp 'LIBS/*' ConnectInterop.java store FILE KEYSFILE
//       Opens FILE with FileOffsetBackingStore, prints "KEYHEX VALUEHEX|null"
//       for each hex key in KEYSFILE (sorted) and the partitions it parsed for
//       connector "inventory", then sets ["inventory",{"server":"added"}] to
//       {"lsn":42} and ["inventory",{"server":"a"}] to null, which rewrites FILE.
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.storage.FileOffsetBackingStore;

public class ConnectInterop {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "json" -> json(Paths.get(args[1]));
            case "store" -> store(Paths.get(args[1]), Paths.get(args[2]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    // The worker's internal converters: schemaless JSON.
    static JsonConverter converter(boolean isKey) {
        JsonConverter c = new JsonConverter();
        c.configure(Map.of("schemas.enable", "false"), isKey);
        return c;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asHashMap(ObjectMapper mapper, String json) throws Exception {
        LinkedHashMap<String, Object> parsed = mapper.readValue(json, LinkedHashMap.class);
        Map<String, Object> map = new HashMap<>();
        for (Map.Entry<String, Object> e : parsed.entrySet()) {
            Object v = e.getValue();
            map.put(e.getKey(), v instanceof Integer i ? Long.valueOf(i) : v); // Debezium offsets hold Longs
        }
        return map;
    }

    static void json(Path cases) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter keys = converter(true), values = converter(false);
        for (String line : Files.readAllLines(cases)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] parts = line.split("\t");
            String connector = parts[0];
            Map<String, Object> partition = asHashMap(mapper, parts[1]);
            Map<String, Object> offset = asHashMap(mapper, parts[2]);
            byte[] key = keys.fromConnectData(connector, null, Arrays.asList(connector, partition));
            byte[] value = values.fromConnectData(connector, null, offset);
            System.out.println(hex(key) + " " + hex(value));
        }
    }

    static void store(Path file, Path keysFile) throws Exception {
        Map<String, String> props = new HashMap<>();
        props.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.put("offset.storage.file.filename", file.toString());
        props.put("bootstrap.servers", "127.0.0.1:9"); // required by WorkerConfig, never contacted
        FileOffsetBackingStore store = new FileOffsetBackingStore(converter(true));
        store.configure(new StandaloneConfig(props));
        store.start();
        try {
            List<ByteBuffer> keys = new ArrayList<>();
            for (String line : Files.readAllLines(keysFile)) {
                if (!line.isBlank()) keys.add(ByteBuffer.wrap(unhex(line.trim())));
            }
            Map<ByteBuffer, ByteBuffer> got = store.get(keys).get();
            List<String> lines = new ArrayList<>();
            for (ByteBuffer k : keys) {
                ByteBuffer v = got.get(k);
                lines.add(hex(k.array()) + " " + (v == null ? "null" : hex(v.array())));
            }
            Collections.sort(lines);
            lines.forEach(System.out::println);
            System.out.println("partitions " + new TreeSet<>(store.connectorPartitions("inventory").stream().map(Object::toString).toList()));

            Map<ByteBuffer, ByteBuffer> update = new HashMap<>();
            update.put(utf8("[\"inventory\",{\"server\":\"added\"}]"), utf8("{\"lsn\":42}"));
            update.put(utf8("[\"inventory\",{\"server\":\"a\"}]"), null);
            store.set(update, null).get();
        } finally {
            store.stop();
        }
    }

    static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }
}
