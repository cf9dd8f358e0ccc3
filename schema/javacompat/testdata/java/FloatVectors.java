// FloatVectors writes Java's Double.toString and Float.toString for a fixed set of values, the reference
// that javacompat.AppendDouble is tested against. Run it on JDK 19 or later (the shortest-repr
// algorithm landed in JDK 19; the reference Kafka Connect runs on JDK 25):
//
//	java FloatVectors.java ../doubles.txt ../floats.txt
//
// Each output line is "<IEEE bits as hex>\t<toString>".
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

public class FloatVectors {
    public static void main(String[] args) throws Exception {
        SplittableRandom rnd = new SplittableRandom(20251130L);
        try (PrintWriter out = new PrintWriter(args[0], "UTF-8")) {
            for (double d : doubles(rnd)) {
                out.printf("%016x\t%s%n", Double.doubleToRawLongBits(d), Double.toString(d));
            }
        }
        try (PrintWriter out = new PrintWriter(args[1], "UTF-8")) {
            for (float f : floats(rnd)) {
                out.printf("%08x\t%s%n", Float.floatToRawIntBits(f), Float.toString(f));
            }
        }
    }

    static List<Double> doubles(SplittableRandom rnd) {
        List<Double> v = new ArrayList<>();
        double[] edges = {0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 2.0, 10.0, 100.0, 1e-3, 1e7, 1.0E-4, 1.2345678E7, 0.001,
            Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE,
            Double.MAX_VALUE, Double.MIN_NORMAL, 2e-323, 1e23, 8.41e21, 5e-324, 9007199254740993.0, 123456789.0,
            0.3, 2.0 / 3.0, Math.PI, Math.E, 1e300, 1e-300, 9999999.0, 9999999.999999998, 0.0009999999999999998};
        for (double d : edges) v.add(d);
        for (int e = -325; e <= 309; e++) {
            double p = Double.parseDouble("1e" + e);
            v.add(p); v.add(Math.nextUp(p)); v.add(Math.nextDown(p)); v.add(-p);
            v.add(Double.parseDouble("2e" + e)); v.add(Double.parseDouble("9.5e" + e)); v.add(Double.parseDouble("12e" + e));
        }
        for (int i = 0; i < 3000; i++) v.add(Double.longBitsToDouble(rnd.nextLong()));
        for (int i = 0; i < 1000; i++) v.add(rnd.nextDouble() * Math.pow(10, rnd.nextInt(-6, 12)));
        for (int i = 0; i < 500; i++) v.add((double) rnd.nextInt(1, 100) * Math.pow(10, rnd.nextInt(-320, 300)));
        for (int i = 0; i < 300; i++) v.add(Double.longBitsToDouble(rnd.nextLong(0, 1L << 52))); // subnormals
        return v;
    }

    static List<Float> floats(SplittableRandom rnd) {
        List<Float> v = new ArrayList<>();
        float[] edges = {0f, -0f, 1f, -1f, 0.1f, 0.5f, 1e-3f, 1e7f, 1.0E-4f, 1.2345678E7f, Float.NaN,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE, Float.MIN_NORMAL,
            3.4028235E38f, 16777217f, 0.3f, (float) Math.PI, 9999999f, 3.0E-45f};
        for (float f : edges) v.add(f);
        for (int e = -46; e <= 39; e++) {
            float p = Float.parseFloat("1e" + e);
            v.add(p); v.add(Math.nextUp(p)); v.add(Math.nextDown(p)); v.add(-p);
            v.add(Float.parseFloat("2e" + e)); v.add(Float.parseFloat("9.5e" + e));
        }
        for (int i = 0; i < 3000; i++) v.add(Float.intBitsToFloat(rnd.nextInt()));
        for (int i = 0; i < 1000; i++) v.add((float) (rnd.nextDouble() * Math.pow(10, rnd.nextInt(-6, 12))));
        for (int i = 0; i < 300; i++) v.add(Float.intBitsToFloat(rnd.nextInt(0, 1 << 23))); // subnormals
        return v;
    }
}
