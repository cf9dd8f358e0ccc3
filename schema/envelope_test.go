package schema

import "testing"

func fieldNames(s *Schema) []string {
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name)
	}
	return names
}

// The byte-level shape of these schemas is checked against Debezium in jsonconv's golden test; these
// tests pin what that test cannot see.
func TestFixedSchemasAreShared(t *testing.T) {
	pg1, pg2 := PostgresSourceSchema(), PostgresSourceSchema()
	tx1, tx2 := TransactionBlockSchema(), TransactionBlockSchema()
	if pg1 != pg2 || tx1 != tx2 {
		t.Fatal("fixed schemas must be singletons so converters cache one rendering")
	}
	row := &Schema{Type: StructT, Optional: true, Name: "p.s.t.Value"}
	env := EnvelopeSchema("p.s.t.Envelope", row, PostgresSourceSchema())
	if env.Field(EnvelopeBefore) != row || env.Field(EnvelopeAfter) != row || env.Field(EnvelopeTransaction) != TransactionBlockSchema() {
		t.Fatal("before and after share the row schema; transaction is the shared block")
	}
	if got := fieldNames(env); len(got) != 8 || got[0] != EnvelopeBefore || got[7] != EnvelopeTsNs {
		t.Fatalf("envelope fields %v", got)
	}
}

func TestSourceSchemaLeavesCommonFieldsFirst(t *testing.T) {
	mysqlLike := sourceSchema("io.debezium.connector.mysql.Source", Field{"table", optionalStringSchema})
	want := []string{SourceVersion, SourceConnector, SourceName, SourceTsMs, SourceSnapshot, SourceDB, SourceSequence, SourceTsUs, SourceTsNs, "table"}
	got := fieldNames(mysqlLike)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if len(PostgresSourceSchema().Fields) != 16 {
		t.Fatalf("appending a connector's fields must not touch another source schema: %v", fieldNames(PostgresSourceSchema()))
	}
}

func TestMessageContentIsOptionalWithoutTouchingTheArgument(t *testing.T) {
	content := &Schema{Type: Bytes}
	msg := PostgresMessageSchema(content)
	if !msg.Field(MessageContent).Optional || content.Optional {
		t.Fatal("content must be made optional on a copy")
	}
}
