package configdef

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
)

var typesByName = map[string]Type{
	"BOOLEAN": Boolean, "STRING": String, "INT": Int, "SHORT": Short, "LONG": Long,
	"DOUBLE": Double, "LIST": List, "CLASS": Class, "PASSWORD": PasswordType,
}

// TestParseValueMatchesKafka replays ConfigDef.parseType and validator
// outcomes recorded from Kafka 4.4 (connect/config/testdata/gen/ConnectVectors.java writes
// parse_type.jsonl and configinfos.json; they live in this package's testdata).
func TestParseValueMatchesKafka(t *testing.T) {
	validators := map[string]Validator{
		"atLeast1":      AtLeast(1),
		"between0and10": Between(0, 10),
		"validString":   ValidString("a", "b"),
	}
	// Kafka validators the vectors record and no key of cdcd uses, so cdcd has none of them.
	notInCDCD := map[string]bool{"caseInsensitive": true, "nonEmpty": true}
	for _, line := range testenv.JSONLines(t, "testdata/parse_type.jsonl") {
		var v struct {
			Type, Raw, Validator string
			Value                *string
			Error                *string
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		typ := typesByName[v.Type]
		parsed, err := ParseValue("x", v.Raw, typ)
		if notInCDCD[v.Validator] {
			continue
		}
		if v.Validator != "" {
			if validators[v.Validator] == nil {
				t.Fatalf("vector of an unknown validator %q", v.Validator)
			}
			if err != nil {
				t.Fatalf("%s %q: %v", v.Type, v.Raw, err)
			}
			got := ""
			if verr := validators[v.Validator]("x", parsed); verr != nil {
				got = verr.Error()
			}
			if got != *v.Error {
				t.Errorf("%s(%s %q): got %q, want %q", v.Validator, v.Type, v.Raw, got, *v.Error)
			}
			continue
		}
		if v.Error != nil {
			if err == nil || err.Error() != *v.Error {
				t.Errorf("%s %q: got (%v, %v), want error %q", v.Type, v.Raw, parsed, err, *v.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: unexpected error %v", v.Type, v.Raw, err)
			continue
		}
		if got, _ := FormatValue(parsed); got != *v.Value {
			t.Errorf("%s %q: got %q, want %q", v.Type, v.Raw, got, *v.Value)
		}
	}
}

// configInfosDefs mirrors the ConfigDef in ConnectVectors.configInfosVector.
var configInfosDefs = []Key{
	{Name: "topic.prefix", Type: String, Required: true, Validator: nonEmptyString, Importance: High, Doc: "Topic prefix.", Group: "Connection", OrderInGroup: 1, Width: WidthMedium, DisplayName: "Topic prefix", Dependents: []string{"slot.name"}},
	{Name: "slot.name", Type: String, Default: Ptr("debezium"), Importance: Medium, Doc: "Slot name.", Group: "Connection", OrderInGroup: 2, Width: WidthMedium, DisplayName: "Slot"},
	{Name: "database.password", Type: PasswordType, Required: true, Importance: High, Doc: "Password.", Group: "Connection", OrderInGroup: 3, Width: WidthShort, DisplayName: "Password"},
	{Name: "snapshot.fetch.size", Type: Int, Default: Ptr("10240"), Validator: AtLeast(1), Importance: Medium, Doc: "Fetch size.", Group: "Advanced", OrderInGroup: 1, Width: WidthShort, DisplayName: "Fetch"},
	{Name: "poll.interval.ms", Type: Long, Default: Ptr("500"), Importance: Low, Doc: "Poll interval.", OrderInGroup: -1},
	{Name: "table.include.list", Type: List, Importance: High, Doc: "Tables.", Group: "Filters", OrderInGroup: 1, Width: WidthLong, DisplayName: "Tables"},
	{Name: "tombstones.on.delete", Type: Boolean, Default: Ptr("true"), Importance: Low, Doc: "Tombstones.", Group: "Advanced", OrderInGroup: 2, Width: WidthShort, DisplayName: "Tombstones"},
	{Name: "heartbeat.ratio", Type: Double, Default: Ptr("0.5"), Importance: Low, Doc: "Ratio.", Group: "Advanced", OrderInGroup: 3, Width: WidthShort, DisplayName: "Ratio"},
	{Name: "snapshot.mode", Type: String, Default: Ptr("initial"), Validator: snapshotModeValidator, Importance: Low, Doc: "Mode.", Group: "Advanced", OrderInGroup: 4, Width: WidthShort, DisplayName: "Mode"},
}

// nonEmptyString and snapshotModeValidator stand in for the Kafka validators of the vector's definitions
// (NonEmptyString, CaseInsensitiveValidString.in("initial", "never")), which no key of cdcd uses: they give
// Kafka's messages for the values the test gives them.
func nonEmptyString(name string, value any) error {
	if s, ok := value.(string); ok && s == "" {
		return &ConfigError{Name: name, Value: value, Message: "String must be non-empty"}
	}
	return nil
}

func snapshotModeValidator(name string, value any) error {
	if s, ok := value.(string); ok && (strings.EqualFold(s, "initial") || strings.EqualFold(s, "never")) {
		return nil
	}
	return &ConfigError{Name: name, Value: value, Message: "String must be one of (case insensitive): NEVER, INITIAL"}
}

// TestConfigInfosMatchesConnect compares byte for byte with the JSON that
// Kafka 4.4's generateResult + Jackson produced for the same definitions.
func TestConfigInfosMatchesConnect(t *testing.T) {
	cfg := map[string]string{
		"slot.name": " myslot ", "database.password": "s3cret", "snapshot.fetch.size": "0",
		"poll.interval.ms": "soon", "table.include.list": "public.a, public.b", "snapshot.mode": "ALWAYS",
	}
	infos := NewConfigInfos("io.debezium.connector.postgresql.PostgresConnector", configInfosDefs, Validate(configInfosDefs, cfg))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(infos); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/configinfos.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("ConfigInfos differ from Connect's:\ngot  %s\nwant %s", buf.Bytes(), want)
	}

	msg := InvalidConfigMessage(infos)
	wantMsg := "Connector configuration is invalid and contains the following 4 error(s):\n" +
		"Missing required configuration \"topic.prefix\" which has no default value.\n" +
		"Invalid value 0 for configuration snapshot.fetch.size: Value must be at least 1\n" +
		"Invalid value soon for configuration poll.interval.ms: Not a number of type LONG\n" +
		"Invalid value ALWAYS for configuration snapshot.mode: String must be one of (case insensitive): NEVER, INITIAL\n" +
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
	if msg != wantMsg {
		t.Errorf("message:\n%s\nwant:\n%s", msg, wantMsg)
	}
}

func TestValidateRules(t *testing.T) {
	defs := []Key{
		{Name: "port", Type: Int, Required: true, Validator: AtLeast(1)},
		{Name: "mode", Type: String, Default: Ptr("initial"), Validator: ValidString("initial", "never")},
		{Name: "secret", Type: PasswordType, Default: Ptr("x")},
		{Name: "parent", Type: String, Default: Ptr(""), Dependents: []string{"ghost"}},
	}
	tests := []struct {
		name       string
		cfg        map[string]string
		wantErrors []string
	}{
		{"missing required also fails the validator on null", map[string]string{},
			[]string{`Missing required configuration "port" which has no default value.`,
				"Invalid value null for configuration port: Value must be non-null",
				"ghost is referred in the dependents, but not defined."}},
		{"bad number reported twice like Kafka", map[string]string{"port": "x"},
			[]string{"Invalid value x for configuration port: Not a number of type INT",
				"Invalid value null for configuration port: Value must be non-null",
				"ghost is referred in the dependents, but not defined."}},
		{"a valid string passes, trimmed", map[string]string{"port": "5432", "mode": " never "},
			[]string{"ghost is referred in the dependents, but not defined."}},
		{"validator message", map[string]string{"port": "5432", "mode": "always"},
			[]string{"Invalid value always for configuration mode: String must be one of: initial, never",
				"ghost is referred in the dependents, but not defined."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Validate(defs, tt.cfg)
			if got := res.Errors(); !slices.Equal(got, tt.wantErrors) {
				t.Errorf("errors:\n%q\nwant\n%q", got, tt.wantErrors)
			}
		})
	}
	res := Validate(defs, map[string]string{"port": "1", "secret": "pw"})
	if v, _ := res.Value("secret"); v.Parsed != Password("pw") || javaString(v.Parsed) != "[hidden]" {
		t.Errorf("password parsed as %#v", v.Parsed)
	}
}

func TestUnknownKeysGetSuggestions(t *testing.T) {
	defs := []Key{{Name: "database.hostname", Type: String}, {Name: "snapshot.mode", Type: String}, {Name: "slot.name", Type: String}}
	cfg := map[string]string{
		"database.hostnme": "h", "snapshot.mdoe": "x", "slot.nmae": "s", "completely.different": "1",
		"transforms.unwrap.type": "t", "database.hostname": "ok",
	}
	res := Validate(defs, cfg, "transforms.")
	want := []UnknownKey{
		{Name: "completely.different"},
		{Name: "database.hostnme", Suggestion: "database.hostname"},
		{Name: "slot.nmae", Suggestion: "slot.name"},
		{Name: "snapshot.mdoe", Suggestion: "snapshot.mode"},
	}
	if !slices.Equal(res.Unknown, want) {
		t.Errorf("got %+v, want %+v", res.Unknown, want)
	}
	if d := editDistance("ab", "ba"); d != 1 {
		t.Errorf("transposition counted as %d edits", d)
	}
}

func TestValidatorErrorIsConfigError(t *testing.T) {
	var ce *ConfigError
	if err := AtLeast(3)("n", int64(2)); !errors.As(err, &ce) || ce.Name != "n" {
		t.Errorf("validator error %v is not a *ConfigError", err)
	}
}

// A Password formats as [hidden] however it is printed, alone or inside a struct, so a reader's config
// can be printed or logged whole.
func TestPasswordNeverFormatsItsText(t *testing.T) {
	const text = "pw-text-42"
	cfg := struct {
		User     string
		Password Password
	}{"alice", Password(text)}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		outputs = append(outputs, fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, cfg.Password))
	}
	asJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "password", cfg.Password, "cfg", cfg)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "password", cfg.Password)
	outputs = append(outputs, string(asJSON), logged.String())
	for _, out := range outputs {
		if strings.Contains(out, text) || strings.Contains(out, fmt.Sprintf("%x", text)) || !strings.Contains(out, Hidden) && !strings.Contains(out, fmt.Sprintf("%x", Hidden)) {
			t.Errorf("printed as %s", out)
		}
	}
	if Password(text).Reveal() != text {
		t.Error("Reveal lost the text")
	}
}
