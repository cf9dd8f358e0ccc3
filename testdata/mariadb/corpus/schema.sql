-- The MariaDB golden corpus: one table per concern, covering the type mapping of debezium-3.6.md §3.3.
-- goldens.sh runs it in a fresh database `cdcd_golden` (utf8mb4) before the connector starts; seed.sql
-- then gives the initial snapshot its rows and changes.sql is what the binlog streams.

-- Every mapped type with a nullable column each; rows hold extremes, ordinary values and NULLs.
CREATE TABLE all_types (
	id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	c_bool BOOLEAN,
	c_bit1 BIT(1),
	c_bit10 BIT(10),
	c_bit64 BIT(64),
	c_tinyint TINYINT,
	c_tinyint_u TINYINT UNSIGNED,
	c_smallint SMALLINT,
	c_smallint_u SMALLINT UNSIGNED,
	c_mediumint MEDIUMINT,
	c_mediumint_u MEDIUMINT UNSIGNED,
	c_int INT,
	c_int_u INT UNSIGNED,
	c_bigint BIGINT,
	c_bigint_u BIGINT UNSIGNED,
	c_float FLOAT,
	c_double DOUBLE,
	c_decimal DECIMAL(10, 3),
	c_decimal_wide DECIMAL(38, 10),
	c_numeric_int NUMERIC(5, 0),
	c_char CHAR(10),
	c_varchar VARCHAR(255),
	c_text TEXT,
	c_longtext LONGTEXT,
	c_binary BINARY(4),
	c_varbinary VARBINARY(16),
	c_blob BLOB,
	c_json JSON,
	c_enum ENUM('small', 'medium', 'large'),
	c_set SET('a', 'b', 'c'),
	c_year YEAR,
	c_date DATE,
	c_time TIME,
	c_time3 TIME(3),
	c_time6 TIME(6),
	c_datetime DATETIME,
	c_datetime3 DATETIME(3),
	c_datetime6 DATETIME(6),
	c_timestamp TIMESTAMP NULL,
	c_timestamp3 TIMESTAMP(3) NULL,
	c_timestamp6 TIMESTAMP(6) NULL,
	c_point POINT,
	c_geometry GEOMETRY
);

-- MariaDB's own UUID type (10.7+). INET4 and INET6 columns are left out: Debezium's MariaDB DDL grammar
-- (3.5.0.Final and 3.6.1.Final alike) has no such data types, so a table holding one fails the connector
-- with "DDL statement couldn't be parsed" at its snapshot.
CREATE TABLE mariadb_types (
	id INT NOT NULL PRIMARY KEY,
	c_uuid UUID
);

-- Column defaults (schema `default`s), incl. a CURRENT_TIMESTAMP one; rows always set every column.
CREATE TABLE defaults_tbl (
	id INT NOT NULL PRIMARY KEY,
	d_int INT NOT NULL DEFAULT 42,
	d_bigint_u BIGINT UNSIGNED DEFAULT 18446744073709551615,
	d_bool BOOLEAN DEFAULT TRUE,
	d_bit BIT(4) DEFAULT b'1010',
	d_float FLOAT DEFAULT 1.5,
	d_double DOUBLE DEFAULT 2.25,
	d_decimal DECIMAL(6, 2) DEFAULT 1.50,
	d_varchar VARCHAR(20) DEFAULT 'hello',
	d_text TEXT DEFAULT 'txt',
	d_varbinary VARBINARY(4) DEFAULT 'ab',
	d_enum ENUM('x', 'y') NOT NULL DEFAULT 'y',
	d_set SET('a', 'b') DEFAULT 'a,b',
	d_year YEAR DEFAULT 2024,
	d_date DATE DEFAULT '2020-02-29',
	d_time TIME(2) DEFAULT '12:34:56.78',
	d_datetime DATETIME(3) DEFAULT '2021-01-01 00:00:00.123',
	d_ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
	d_ts_const TIMESTAMP(6) NULL DEFAULT '2022-03-04 05:06:07.080900',
	d_null VARCHAR(5) DEFAULT NULL
);

-- TIMESTAMP(fsp) fractions with trailing zeros: how ZonedTimestamp pads them in the snapshot and the binlog.
CREATE TABLE ts_fractions (
	id INT NOT NULL PRIMARY KEY,
	ts0 TIMESTAMP NULL,
	ts2 TIMESTAMP(2) NULL,
	ts3 TIMESTAMP(3) NULL,
	ts6 TIMESTAMP(6) NULL
);

-- Zero and partly-zero dates (the server's sql_mode has no NO_ZERO_DATE / NO_ZERO_IN_DATE).
CREATE TABLE zero_dates (
	id INT NOT NULL PRIMARY KEY,
	zd DATE NULL,
	zd_nn DATE NOT NULL,
	zdt DATETIME NULL,
	zdt_nn DATETIME(3) NOT NULL,
	zts TIMESTAMP NULL,
	zts_nn TIMESTAMP(6) NOT NULL DEFAULT '0000-00-00 00:00:00'
);

CREATE TABLE unicode_tbl (
	id INT NOT NULL PRIMARY KEY,
	c_utf8mb4 VARCHAR(64),
	c_latin1 VARCHAR(32) CHARACTER SET latin1,
	c_text_utf8 TEXT CHARACTER SET utf8mb3
);

-- No primary key: keys are null.
CREATE TABLE no_pk (
	a INT,
	b VARCHAR(20)
);

CREATE TABLE composite_pk (
	k1 INT NOT NULL,
	k2 VARCHAR(10) NOT NULL,
	v TEXT,
	PRIMARY KEY (k1, k2)
);

-- Altered mid-stream by changes.sql.
CREATE TABLE alter_me (
	id INT NOT NULL PRIMARY KEY,
	v INT
);

-- Truncated mid-stream by changes.sql.
CREATE TABLE truncate_me (
	id INT NOT NULL PRIMARY KEY,
	v VARCHAR(10)
);

-- changes.sql inserts the end marker here last; goldens.sh waits for it.
CREATE TABLE cdcd_marker (
	id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	note VARCHAR(64) NOT NULL
);
