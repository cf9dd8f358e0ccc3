import java.io.*;
import java.nio.file.*;
import java.util.*;
// Writes schema/javacompat/testdata/object_arrays.tsv (javac ObjectArrays.java && java ObjectArrays OUT): name, hex of ObjectOutputStream.writeObject(array), and the array as
// the Go test builds it.
public class ObjectArrays {
  static String hex(Object o) throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(b)) { out.writeObject(o); }
    StringBuilder s = new StringBuilder();
    for (byte x : b.toByteArray()) s.append(String.format("%02x", x));
    return s.toString();
  }
  public static void main(String[] a) throws Exception {
    String big = "x".repeat(70000);
    Object[][] cases = {
      null, {}, {1}, {1, -7}, {25L}, {Long.MIN_VALUE}, {"abc"}, {(short) 5}, {true, false}, {null, 9},
      {new String("a"), 2, new String("a"), 3L, 4}, {"é€\u0000x\uD83D\uDE00"}, {big}, {Integer.MAX_VALUE, "k", (short) -1, Long.MAX_VALUE},
      {1, 1, 200, 200, true, true, (short) 3, (short) 3, 5L, 5L, -128, -128, 128, 128},
    };
    String[] names = {"null", "empty", "int", "ints", "long", "longmin", "string", "short", "bools", "nullelem",
      "mixed", "unicode", "longstring", "composite", "boxcache"};
    StringBuilder out = new StringBuilder("# name\thex of ObjectOutputStream.writeObject (Java " + System.getProperty("java.version") + ")\n");
    for (int i = 0; i < cases.length; i++) out.append(names[i]).append('\t').append(hex(cases[i])).append('\n');
    // A stream Java writes with shared String instances (back references to strings), for the reader only.
    String s = "a";
    out.append("sharedstring\t").append(hex(new Object[]{s, 2, s})).append('\n');
    Files.writeString(Path.of(a[0]), out.toString());
  }
}
