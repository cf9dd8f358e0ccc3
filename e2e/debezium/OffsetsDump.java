// Prints the entries of a Kafka Connect standalone offsets file (FileOffsetBackingStore: a Java-serialised
// HashMap<byte[],byte[]>) as a JSON array of {"key": ..., "value": ...} strings, sorted by key, so the raw bytes
// Connect wrote (including the key order inside each offset value) can be read and diffed.
// Run as a single-file program: java OffsetsDump.java FILE
import java.io.FileInputStream;
import java.io.ObjectInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

public class OffsetsDump {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java OffsetsDump.java OFFSETS_FILE");
            System.exit(2);
        }
        Object raw;
        try (ObjectInputStream in = new ObjectInputStream(new FileInputStream(args[0]))) {
            raw = in.readObject();
        }
        TreeMap<String, String> sorted = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) raw).entrySet()) {
            sorted.put(text(e.getKey()), text(e.getValue()));
        }
        StringBuilder out = new StringBuilder("[");
        String sep = "\n";
        for (Map.Entry<String, String> e : sorted.entrySet()) {
            out.append(sep).append("  {\"key\":").append(quote(e.getKey()))
               .append(",\"value\":").append(e.getValue() == null ? "null" : quote(e.getValue())).append('}');
            sep = ",\n";
        }
        out.append("\n]");
        System.out.println(out);
    }

    private static String text(Object bytes) {
        return bytes == null ? null : new String((byte[]) bytes, StandardCharsets.UTF_8);
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
