// Prints test vectors from the running JDK. Run with `java Vectors.java MODE SEED COUNT`;
// the committed files come from `hashmap 1 1000` (Java 17 and 25 agree) and
// `doubles 1 3000` (Java 25; Java 17 formats some doubles differently).
//
//   hashmap  COUNT random key sets put into a new HashMap<String, Object>();
//            each line: the keys in insertion order, a tab, the keys in
//            iteration order; keys are hex-encoded UTF-8, space-separated.
//            The first lines are Debezium's own offset key sets.
//   doubles  COUNT random doubles; each line: the bits in hex, a tab,
//            Double.toString of it.
import java.nio.charset.StandardCharsets;
import java.util.*;

public class Vectors {
    static final String[][] DEBEZIUM_KEY_SETS = {
        {"ts_usec", "txId", "lsn", "xmin", "snapshot", "last_snapshot_record", "lsn_proc", "lsn_commit", "messageType"},
        {"lsn_proc", "messageType", "lsn_commit", "lsn", "txId", "ts_usec"},
        {"transaction_id", "file", "pos", "gtids", "event", "row", "server_id", "ts_sec", "snapshot", "snapshot_completed"},
        {"incremental_snapshot_maximum_key", "incremental_snapshot_collections", "incremental_snapshot_primary_key",
         "incremental_snapshot_correlation_id", "lsn", "txId", "ts_usec", "lsn_proc", "lsn_commit", "messageType"},
        {"server", "database"},
        {"server_id", "rs"},
    };

    // Mostly ASCII, with a few BMP and supplementary characters so hashing
    // over UTF-16 code units (surrogate pairs) is exercised.
    static final String[] ALPHABET = {
        "a", "b", "c", "d", "e", "l", "n", "o", "p", "r", "s", "t", "x", "_", "0", "1", "9", "A", "Z",
        "é", "ß", "中", "€", "😀", "𝄞",
    };

    public static void main(String[] args) {
        Random rnd = new Random(Long.parseLong(args[1]));
        int count = Integer.parseInt(args[2]);
        switch (args[0]) {
            case "hashmap" -> {
                for (String[] keys : DEBEZIUM_KEY_SETS) System.out.println(hashMapLine(Arrays.asList(keys)));
                for (int i = 0; i < count; i++) {
                    int n = 1 + rnd.nextInt(i % 4 == 0 ? 60 : 14);
                    List<String> keys = new ArrayList<>();
                    for (int j = 0; j < n; j++) {
                        StringBuilder sb = new StringBuilder();
                        int len = 1 + rnd.nextInt(12);
                        for (int k = 0; k < len; k++) sb.append(ALPHABET[rnd.nextInt(ALPHABET.length)]);
                        keys.add(sb.toString());
                    }
                    System.out.println(hashMapLine(keys));
                }
            }
            case "doubles" -> {
                double[] fixed = {0.0, -0.0, 1.0, 100.0, 0.001, 9.999999E-4, 1.0E7, 9999999.0, 1.0E-5, 5.0E-324,
                    Double.MAX_VALUE, Double.MIN_NORMAL, 0.1, 1.0 / 3, 123456.789, 2.0E23, 1.0E23, -1.5};
                for (double d : fixed) System.out.println(doubleLine(d));
                for (int i = 0; i < count; i++) {
                    double d;
                    switch (i % 3) {
                        case 0 -> d = Double.longBitsToDouble(rnd.nextLong());
                        case 1 -> d = rnd.nextDouble() * Math.pow(10, rnd.nextInt(20) - 8);
                        default -> d = (double) rnd.nextInt(100000) / Math.pow(10, rnd.nextInt(8));
                    }
                    if (Double.isNaN(d) || Double.isInfinite(d)) continue;
                    System.out.println(doubleLine(d));
                }
            }
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    static String hashMapLine(List<String> keys) {
        Map<String, Object> map = new HashMap<>();
        for (String k : keys) map.put(k, Boolean.TRUE);
        return hexList(keys) + "\t" + hexList(new ArrayList<>(map.keySet()));
    }

    static String doubleLine(double d) {
        return String.format("%016x", Double.doubleToRawLongBits(d)) + "\t" + d;
    }

    static String hexList(List<String> keys) {
        StringJoiner sj = new StringJoiner(" ");
        for (String k : keys) {
            StringBuilder sb = new StringBuilder();
            for (byte b : k.getBytes(StandardCharsets.UTF_8)) sb.append(String.format("%02x", b));
            sj.add(sb.toString());
        }
        return sj.toString();
    }
}
