package tables

// java.sql.Types codes: what Column.JDBCType holds, as Debezium writes it in jdbcType.
const (
	JDBCBigint                = -5
	JDBCBinary                = -2
	JDBCBit                   = -7
	JDBCBlob                  = 2004
	JDBCBoolean               = 16
	JDBCChar                  = 1
	JDBCClob                  = 2005
	JDBCDatalink              = 70
	JDBCDate                  = 91
	JDBCDecimal               = 3
	JDBCDouble                = 8
	JDBCFloat                 = 6
	JDBCInteger               = 4
	JDBCLongNVarch            = -16
	JDBCLongNVarchar          = -16
	JDBCLongVarbinary         = -4
	JDBCLongVarchar           = -1
	JDBCNChar                 = -15
	JDBCNClob                 = 2011
	JDBCNVarchar              = -9
	JDBCNumeric               = 2
	JDBCOther                 = 1111
	JDBCReal                  = 7
	JDBCSQLXML                = 2009
	JDBCSmallint              = 5
	JDBCTime                  = 92
	JDBCTimestamp             = 93
	JDBCTimestampWithTimezone = 2014
	JDBCTinyint               = -6
	JDBCVarbinary             = -3
	JDBCVarchar               = 12
)
