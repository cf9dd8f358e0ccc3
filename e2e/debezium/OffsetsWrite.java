// Writes a Kafka Connect standalone offsets file holding the given entries, as FileOffsetBackingStore
// does: a Java-serialised HashMap<byte[],byte[]> of the entries' UTF-8 bytes. The counterpart of
// OffsetsDump.java; conformance.sh gives cdcd the offset it should resume from with it.
// Run as a single-file program: java OffsetsWrite.java FILE KEY VALUE [KEY VALUE...]
import java.io.FileOutputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

public class OffsetsWrite {
    public static void main(String[] args) throws Exception {
        if (args.length < 3 || args.length % 2 == 0) {
            System.err.println("usage: java OffsetsWrite.java OFFSETS_FILE KEY VALUE [KEY VALUE...]");
            System.exit(2);
        }
        HashMap<byte[], byte[]> entries = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            entries.put(args[i].getBytes(StandardCharsets.UTF_8), args[i + 1].getBytes(StandardCharsets.UTF_8));
        }
        try (ObjectOutputStream out = new ObjectOutputStream(new FileOutputStream(args[0]))) {
            out.writeObject(entries);
        }
    }
}
