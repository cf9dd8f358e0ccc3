package connect

import (
	"context"
	"testing"
)

func TestCheckSchemasRefusesUnknownConnectorsAndNonAvroConverters(t *testing.T) {
	w := newTestWorker(t) // JsonConverter for keys and values
	_, err := w.CheckSchemas(context.Background(), "nope")
	wantRequestError(t, err, NotFound, "Connector nope not found")

	if _, _, err := w.PutConnectorConfig("pg", pgConfig("pg"), false, "stopped"); err != nil {
		t.Fatal(err)
	}
	_, err = w.CheckSchemas(context.Background(), "pg")
	wantRequestError(t, err, BadRequest, "Connector pg does not use a schema registry: neither key.converter nor value.converter is io.confluent.connect.avro.AvroConverter")
}
