package mysql

import (
	"strconv"
	"strings"
)

// BinlogStatusStatement is the statement that reports the binlog position and the executed GTID set on
// the server whose version string (SELECT VERSION(), or the handshake's) is version: MySQL 8.4 removed
// SHOW MASTER STATUS for SHOW BINARY LOG STATUS (whose columns are the same); MariaDB and older MySQL
// keep the old name. The choice follows the version, not a failed first try: an error's text is no
// contract, and a refused statement on a production server is noise in its log.
func BinlogStatusStatement(version string) string {
	if mysqlAtLeast(version, 8, 4) {
		return "SHOW BINARY LOG STATUS"
	}
	return "SHOW MASTER STATUS"
}

// mysqlAtLeast reports whether version is an Oracle MySQL (not MariaDB) of major.minor or later. A
// version it cannot read counts as older: the old statements are the ones every server had until 8.4.
func mysqlAtLeast(version string, major, minor int) bool {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return false
	}
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	gotMajor, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(parts[1])
	}
	gotMinor, err := strconv.Atoi(parts[1][:digits])
	if err != nil {
		return false
	}
	return gotMajor > major || gotMajor == major && gotMinor >= minor
}
