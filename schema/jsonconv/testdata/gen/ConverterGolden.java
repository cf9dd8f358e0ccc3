// ConverterGolden runs Kafka Connect's real JsonConverter over a fixed set of (schema, value) cases and
// writes its bytes, the golden vectors of jsonconv's converter test. Run it with gen.sh, which puts
// connect-json 4.4.0 and its dependencies (Jackson 2.21) on the class path.
//
// Each output line is "<case>\t<config>\t<result>", where result is the output's base64, "TOMBSTONE" for
// a null record, or "ERROR" when the converter throws. The Go test builds the same cases by name.
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class ConverterGolden {
    record Case(String name, Schema schema, Object value) {}

    static final Map<String, Map<String, String>> CONFIGS = new LinkedHashMap<>();
    static {
        CONFIGS.put("default", Map.of());
        CONFIGS.put("noschemas", Map.of("schemas.enable", "false"));
        CONFIGS.put("numeric", Map.of("decimal.format", "NUMERIC"));
        CONFIGS.put("keepnulls", Map.of("replace.null.with.default", "false"));
    }

    public static void main(String[] args) throws Exception {
        try (PrintWriter out = new PrintWriter(args[0], "UTF-8")) {
            for (Case c : cases()) {
                for (var cfg : CONFIGS.entrySet()) {
                    JsonConverter conv = new JsonConverter();
                    conv.configure(cfg.getValue(), false);
                    String result;
                    try {
                        byte[] b = conv.fromConnectData("topic", c.schema(), c.value());
                        result = b == null ? "TOMBSTONE" : Base64.getEncoder().encodeToString(b);
                    }
                    catch (RuntimeException e) {
                        result = "ERROR";
                    }
                    out.printf("%s\t%s\t%s%n", c.name(), cfg.getKey(), result);
                }
            }
        }
    }

    static List<Case> cases() {
        List<Case> cs = new ArrayList<>();

        Schema nested = SchemaBuilder.struct().name("test.Nested").optional()
                .field("x", SchemaBuilder.int64().optional().defaultValue(7L).build())
                .build();
        Schema withDefaults = SchemaBuilder.struct().name("test.Value")
                .field("id", SchemaBuilder.int32().defaultValue(0).build())
                .field("name", SchemaBuilder.string().optional().defaultValue("dflt").build())
                .field("note", Schema.OPTIONAL_STRING_SCHEMA)
                .field("flag", SchemaBuilder.bool().optional().defaultValue(true).build())
                .field("nested", nested)
                .build();
        cs.add(new Case("struct_defaults", withDefaults, new Struct(withDefaults).put("id", 5).put("nested", new Struct(nested))));
        cs.add(new Case("struct_defaults_set", withDefaults, new Struct(withDefaults).put("id", 5).put("name", "n")
                .put("note", "x").put("flag", false).put("nested", new Struct(nested).put("x", -1L))));
        Schema requiredDefault = SchemaBuilder.struct().name("test.RequiredDefault")
                .field("req", SchemaBuilder.string().defaultValue("r").build())
                .build();
        cs.add(new Case("required_default_field", requiredDefault, new Struct(requiredDefault)));

        Schema prims = SchemaBuilder.struct().name("test.Prims").version(3).doc("all the primitives")
                .field("i8", Schema.INT8_SCHEMA).field("i16", Schema.INT16_SCHEMA)
                .field("i32", Schema.INT32_SCHEMA).field("i64", Schema.INT64_SCHEMA)
                .field("f32", Schema.FLOAT32_SCHEMA).field("f64", Schema.FLOAT64_SCHEMA)
                .field("f64nan", Schema.FLOAT64_SCHEMA).field("f64inf", Schema.FLOAT64_SCHEMA)
                .field("f32neg0", Schema.FLOAT32_SCHEMA).field("bool", Schema.BOOLEAN_SCHEMA)
                .field("bytes", Schema.BYTES_SCHEMA).field("empty", Schema.OPTIONAL_BYTES_SCHEMA)
                .build();
        cs.add(new Case("primitives", prims, new Struct(prims).put("i8", (byte) -128).put("i16", (short) 32767)
                .put("i32", Integer.MIN_VALUE).put("i64", Long.MAX_VALUE).put("f32", 3.4028235E38f)
                .put("f64", 1.0E7).put("f64nan", Double.NaN).put("f64inf", Double.NEGATIVE_INFINITY)
                .put("f32neg0", -0.0f).put("bool", true).put("bytes", new byte[]{0, 1, (byte) 0xfe, (byte) 0xff, 'a'})
                .put("empty", new byte[0])));

        Schema dec2 = Decimal.builder(2).optional().build();
        Schema dec0 = Decimal.schema(0);
        Schema decDefault = Decimal.builder(3).optional().defaultValue(new BigDecimal("1.500")).build();
        Schema decs = SchemaBuilder.struct().name("test.Decimals")
                .field("a", dec2).field("b", dec2).field("c", dec2).field("d", dec0).field("e", dec0)
                .field("f", decDefault).field("g", dec2).field("h", dec0).build();
        cs.add(new Case("decimals", decs, new Struct(decs).put("a", new BigDecimal("123.45")).put("b", new BigDecimal("-1.28"))
                .put("c", new BigDecimal("1.28")).put("d", new BigDecimal("123456789012345678901234567890"))
                .put("e", new BigDecimal("-98765432109876543210")).put("g", new BigDecimal("0.01"))
                .put("h", BigDecimal.ZERO)));
        cs.add(new Case("decimal_sci_small", Decimal.schema(10), new BigDecimal(new BigInteger("12"), 10)));
        cs.add(new Case("decimal_negative_scale", Decimal.schema(-3), new BigDecimal(new BigInteger("12"), -3)));
        cs.add(new Case("decimal_scale_mismatch", Decimal.schema(2), new BigDecimal("1.5")));

        Schema arrays = SchemaBuilder.struct().name("test.Arrays")
                .field("strs", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build())
                .field("ints", SchemaBuilder.array(SchemaBuilder.int32().optional().defaultValue(9).build()).optional().build())
                .field("none", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().build())
                .build();
        cs.add(new Case("arrays", arrays, new Struct(arrays).put("strs", Arrays.asList("a", null, "c"))
                .put("ints", Arrays.asList(1, null, 3))));

        Map<String, Long> sm = new LinkedHashMap<>();
        sm.put("z", 1L);
        sm.put("a", null);
        sm.put("m\"q", -3L);
        Map<Integer, String> im = new LinkedHashMap<>();
        im.put(2, "two");
        im.put(-1, null);
        Schema maps = SchemaBuilder.struct().name("test.Maps")
                .field("bystr", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA).build())
                .field("byint", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
                .build();
        cs.add(new Case("maps", maps, new Struct(maps).put("bystr", sm).put("byint", im)));

        cs.add(new Case("unicode", Schema.STRING_SCHEMA,
                "a\u0000\u0001\u001f\b\t\n\f\r\"\\/\u007f\u0080\u00e9\u2028\u4e2d\ud83d\ude00\uffff end"));

        cs.add(new Case("optional_null", Schema.OPTIONAL_STRING_SCHEMA, null));
        cs.add(new Case("default_null", SchemaBuilder.string().defaultValue("d").build(), null));
        cs.add(new Case("required_null", Schema.STRING_SCHEMA, null));
        cs.add(new Case("tombstone", null, null));

        Map<String, Object> free = new LinkedHashMap<>();
        free.put("a", 1L);
        free.put("b", Arrays.asList(true, "x", null, 2.5));
        free.put("c", null);
        cs.add(new Case("schemaless", null, free));
        Map<Object, Object> freeInt = new LinkedHashMap<>();
        freeInt.put(1, "x");
        cs.add(new Case("schemaless_intkeys", null, freeInt));

        Schema logical = SchemaBuilder.struct().name("test.Logical")
                .field("date", Date.SCHEMA).field("time", Time.SCHEMA).field("ts", Timestamp.SCHEMA)
                .field("tsdef", Timestamp.builder().optional().defaultValue(new java.util.Date(0)).build())
                .build();
        cs.add(new Case("logical", logical, new Struct(logical).put("date", new java.util.Date(19000L * 86400000L))
                .put("time", new java.util.Date(45296789L)).put("ts", new java.util.Date(-1234567L))));

        Schema snapshot = SchemaBuilder.string().optional().name("io.debezium.data.Enum").version(1)
                .parameter("allowed", "true,first,false").parameter("b", "2").defaultValue("false").build();
        Schema params = SchemaBuilder.struct().name("test.Params")
                .field("snapshot", snapshot)
                .field("empty", SchemaBuilder.string().optional().parameters(Map.of()).build())
                .build();
        cs.add(new Case("params", params, new Struct(params)));
        return cs;
    }
}
