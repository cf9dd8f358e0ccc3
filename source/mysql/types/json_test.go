package types

import (
	"testing"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// go-mysql's MySQL-text rendering of binary JSON in, Debezium's JsonStringFormatter text out.
func TestDebeziumJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1,"k":[1,2.5,1.0,true,null],"s":"x\u001fy\n"}`, `{"a":1,"k":[1,2.5,1.0,true,null],"s":"x\u001Fy\n"}`},
		{`[-5,-0.5,18446744073709551615]`, `[-5,-0.5,18446744073709551615]`},
		{`{"q":"a\"1.5e3\\","n":1.5e3}`, `{"q":"a\"1.5e3\\","n":1500.0}`},
		// Where Double.toString would use an exponent, the exact BigDecimal of the double.
		{`[1e-05,0.0001,12345678.5,100000000000000000000.0]`, `[0.000010000000000000000818030539140313095458623138256371021270751953125,` +
			`0.000100000000000000004792173602385929598312941379845142364501953125,12345678.5,100000000000000000000]`},
		{`"é ✓"`, `"é ✓"`},
	}
	for _, tc := range tests {
		if got := debeziumJSON(tc.in); got != tc.want {
			t.Errorf("debeziumJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestMySQLJSONFromBinlogIsRewritten(t *testing.T) {
	m := withModes(func(m *Modes) { m.Flavor = MySQL })
	got, err := m.FromBinlog(col("JSON", tables.JDBCVarchar), `{"d":1e-05}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"d":0.000010000000000000000818030539140313095458623138256371021270751953125}`; got != want {
		t.Errorf("got %v, want %s", got, want)
	}
	// The snapshot reads MySQL's own text through JDBC, which Debezium passes on unchanged.
	if got, _ := m.FromSnapshot(col("JSON", tables.JDBCVarchar), text(`{"d": 1e-05}`)); got != `{"d": 1e-05}` {
		t.Errorf("snapshot JSON = %v", got)
	}
}
