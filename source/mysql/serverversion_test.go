package mysql

import "testing"

func TestBinlogStatusStatementFollowsTheServerVersion(t *testing.T) {
	for version, want := range map[string]string{
		"9.7.4-2":                       "SHOW BINARY LOG STATUS",
		"8.4.0":                         "SHOW BINARY LOG STATUS",
		"8.4.3-log":                     "SHOW BINARY LOG STATUS",
		"10.0.1":                        "SHOW BINARY LOG STATUS", // a MySQL 10, whenever it comes
		"8.3.0":                         "SHOW MASTER STATUS",
		"8.0.36":                        "SHOW MASTER STATUS",
		"5.7.44-log":                    "SHOW MASTER STATUS",
		"10.11.6-MariaDB-0+deb12u1-log": "SHOW MASTER STATUS",
		"11.8.2-MariaDB":                "SHOW MASTER STATUS",
		"":                              "SHOW MASTER STATUS",
		"garbage":                       "SHOW MASTER STATUS",
		"9.x":                           "SHOW MASTER STATUS",
	} {
		if got := BinlogStatusStatement(version); got != want {
			t.Errorf("BinlogStatusStatement(%q) = %q, want %q", version, got, want)
		}
	}
}
