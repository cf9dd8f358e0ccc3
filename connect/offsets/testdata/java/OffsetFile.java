// Reads and writes offsets files the way Kafka Connect's FileOffsetBackingStore
// does (ObjectOutputStream.writeObject of a HashMap<byte[], byte[]> built with
// new HashMap<>()), using only the JDK. Run with `java OffsetFile.java MODE ...`.
//
//   fixtures DIR   write the committed fixture files DIR/NAME.ser, each with
//                  DIR/NAME.txt listing its entries in stream order
//   copy IN OUT    read IN, print its entries sorted, and write them to OUT
//
// Entries print one per line as "KEYHEX VALUEHEX", or "KEYHEX null" for a
// null value.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class OffsetFile {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "fixtures" -> fixtures(Paths.get(args[1]));
            case "copy" -> {
                Map<byte[], byte[]> map = read(Paths.get(args[1]));
                List<String> lines = new ArrayList<>();
                for (Map.Entry<byte[], byte[]> e : map.entrySet()) lines.add(line(e));
                Collections.sort(lines);
                lines.forEach(System.out::println);
                write(Paths.get(args[2]), map);
            }
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    // Only what an offsets file may contain gets deserialized, like Connect's
    // SafeObjectInputStream (HashMap.readObject checks its table as Map.Entry[]).
    @SuppressWarnings("unchecked")
    static Map<byte[], byte[]> read(Path path) throws Exception {
        try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(path))) {
            in.setObjectInputFilter(info -> {
                Class<?> c = info.serialClass();
                if (c == null || c == HashMap.class || c == byte[].class || c == Map.Entry[].class) return ObjectInputFilter.Status.ALLOWED;
                return ObjectInputFilter.Status.REJECTED;
            });
            Object obj = in.readObject();
            if (!(obj instanceof HashMap)) throw new IOException("expected HashMap but found " + obj.getClass());
            return (Map<byte[], byte[]>) obj;
        }
    }

    static void write(Path path, Map<byte[], byte[]> entries) throws IOException {
        // One put per entry, as FileOffsetBackingStore.save does; putAll would
        // size the table differently on some JDKs.
        Map<byte[], byte[]> raw = new HashMap<>();
        for (Map.Entry<byte[], byte[]> e : entries.entrySet()) raw.put(e.getKey(), e.getValue());
        try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(path))) {
            out.writeObject(raw);
        }
    }

    static String line(Map.Entry<byte[], byte[]> e) {
        return hex(e.getKey()) + " " + (e.getValue() == null ? "null" : hex(e.getValue()));
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void fixtures(Path dir) throws IOException {
        Map<String, Map<byte[], byte[]>> fixtures = new LinkedHashMap<>();
        fixtures.put("empty", new HashMap<>());

        Map<byte[], byte[]> one = new HashMap<>();
        one.put(utf8("[\"inventory\",{\"server\":\"dbserver1\"}]"),
                utf8("{\"lsn_proc\":24023128,\"messageType\":\"INSERT\",\"lsn_commit\":24023128,\"lsn\":24023128,\"txId\":555,\"ts_usec\":1718000000000000}"));
        fixtures.put("one", one);

        Map<byte[], byte[]> nullValue = new HashMap<>();
        nullValue.put(utf8("[\"inventory\",{\"server\":\"reset\"}]"), null);
        nullValue.put(utf8("[\"inventory\",{\"server\":\"kept\"}]"), utf8("{\"lsn\":1}"));
        fixtures.put("null-value", nullValue);

        // 40 entries: the table grows to 64 buckets; values include an empty
        // array, non-UTF-8 bytes and one longer than a 1024-byte block.
        Map<byte[], byte[]> many = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            byte[] key = utf8("[\"conn-" + i + "\",{\"server\":\"srv-" + i + "\"}]");
            byte[] value;
            if (i == 0) value = new byte[0];
            else if (i == 1) value = new byte[] {(byte) 0xff, 0, (byte) 0xac, (byte) 0xed};
            else if (i == 2) value = utf8("{\"gtids\":\"" + "x".repeat(2000) + "\"}");
            else value = utf8("{\"file\":\"binlog.00000" + i + "\",\"pos\":" + (i * 1000) + "}");
            many.put(key, value);
        }
        fixtures.put("many", many);

        for (Map.Entry<String, Map<byte[], byte[]>> f : fixtures.entrySet()) {
            try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(dir.resolve(f.getKey() + ".ser")))) {
                out.writeObject(f.getValue());
            }
            // Iterating the same map again yields the order writeObject used.
            List<String> lines = new ArrayList<>();
            for (Map.Entry<byte[], byte[]> e : f.getValue().entrySet()) lines.add(line(e));
            Files.write(dir.resolve(f.getKey() + ".txt"), lines);
        }
    }
}
