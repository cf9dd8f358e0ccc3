// Generates connect/config/testdata/properties_vectors.jsonl from the JDK's own
// java.util.Properties. Run from connect/config:
//
//	java testdata/gen/PropertiesVectors.java > testdata/properties_vectors.jsonl
//
// Each line holds one input (base64 of its bytes) and what Properties.load
// made of it, read as a byte stream (ISO-8859-1, as Connect reads worker and
// connector files) and through a UTF-8 Reader (as FileConfigProvider does).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class PropertiesVectors {
    public static void main(String[] args) throws Exception {
        List<String[]> cases = new ArrayList<>();
        String[][] fixed = {
            {"empty", ""},
            {"simple", "a=b\nc:d\ne f\n"},
            {"separators", "k1 = v1\nk2 : v2\nk3   v3\nk4=\nk5\nk6 =  = v\nk7 :=x\nk8= :x\n"},
            {"comments", "# c\n! c\n  # indented comment\na=1 # not a comment\n#a=2\n"},
            {"leading-ws", "   \t\fkey = value   \n"},
            {"continuation", "k = one, \\\n    two, \\\n\tthree\n"},
            {"even-backslashes", "k = a\\\\\nnext = b\n"},
            {"odd-backslashes", "k = a\\\\\\\n  b\n"},
            {"escapes", "k = \\t\\n\\r\\f\\a\\\\\\=\\:\\ \\#\n"},
            {"escaped-key", "a\\=b = 1\nc\\:d : 2\ne\\ f 3\n\\#g 4\n"},
            {"unicode", "k = caf\\u00e9 \\u4e2d\n"},
            {"surrogates", "k = \\uD83D\\uDE00\n"},
            {"lone-surrogate", "k = x\\uD83Dy\n"},
            {"bad-unicode", "k = \\u12G4\n"},
            {"short-unicode", "k = \\u12\n"},
            {"short-unicode-key", "k\\u12=v\n"},
            {"duplicates", "a=1\nb=2\na=3\n"},
            {"crlf", "a=1\r\nb=2\r\n\r\nc=3\r"},
            {"cr-continuation", "a=1\\\r\n  2\r\nb=3\n"},
            {"continuation-blank-line", "a=1\\\n\nb=2\n"},
            {"continuation-comment", "a=1\\\n# not a comment\n"},
            {"lone-backslash-line", "\\\n# comment after dangling continuation\nb=1\n"},
            {"lone-backslash-eof", "\\"},
            {"backslash-newline-eof", "\\\n"},
            {"backslash-newline-ws-eof", "\\\n   "},
            {"backslash-crlf-eof", "\\\r\n"},
            {"value-backslash-eof", "a=b\\"},
            {"value-backslash-newline-eof", "a=b\\\n"},
            {"no-trailing-newline", "a=b"},
            {"only-key", "justakey"},
            {"comment-eof", "a=1\n# trailing"},
            {"latin1", "k = caf\u00c3\u00a9\n"},
            {"placeholder", "database.password=${file:/etc/secret.properties:pw}\n"},
            {"windows-path", "path=C:\\\\dir\\\\file\n"},
            {"unknown-escape", "k=\\q\\z\\u0041\n"},
        };
        for (String[] f : fixed) cases.add(f);
        Random rnd = new Random(20240601L);
        String alphabet = " \t\f\r\n\\=:#!abut0F9\u00e9";
        for (int i = 0; i < 400; i++) {
            int len = rnd.nextInt(24);
            StringBuilder sb = new StringBuilder();
            for (int j = 0; j < len; j++) sb.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
            cases.add(new String[]{"random-" + i, sb.toString()});
        }
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        for (String[] c : cases) {
            // Inputs are written as UTF-8 bytes; the stream reading then sees
            // each byte of a non-ASCII character as its own Latin-1 character.
            byte[] bytes = c[1].getBytes(StandardCharsets.UTF_8);
            StringBuilder line = new StringBuilder();
            line.append("{\"name\":").append(q(c[0]));
            line.append(",\"input\":").append(q(Base64.getEncoder().encodeToString(bytes)));
            line.append(",\"stream\":").append(load(() -> { Properties p = new Properties(); p.load(new ByteArrayInputStream(bytes)); return p; }));
            line.append(",\"reader\":").append(load(() -> { Properties p = new Properties(); p.load(new InputStreamReader(new ByteArrayInputStream(bytes), StandardCharsets.UTF_8)); return p; }));
            line.append("}");
            out.println(line);
        }
    }

    interface Loader { Properties load() throws IOException; }

    static String load(Loader l) {
        try {
            Properties p = l.load();
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String k : p.stringPropertyNames()) sorted.put(k, p.getProperty(k));
            StringBuilder sb = new StringBuilder("{\"props\":{");
            boolean first = true;
            for (Map.Entry<String, String> e : sorted.entrySet()) {
                if (!first) sb.append(',');
                first = false;
                sb.append(q(e.getKey())).append(':').append(q(e.getValue()));
            }
            return sb.append("}}").toString();
        } catch (IllegalArgumentException | IOException e) {
            return "{\"error\":" + q(e.getMessage()) + "}";
        }
    }

    // q quotes s as a JSON string, escaping every non-ASCII UTF-16 unit so a
    // lone surrogate survives as written.
    static String q(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
            else if (ch < 0x20 || ch > 0x7e) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        return sb.append('"').toString();
    }
}
