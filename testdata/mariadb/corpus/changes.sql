-- What the binlog streams after the snapshot; runs with autocommit, so each statement outside an explicit
-- transaction is its own transaction. The last statement writes the end marker goldens.sh waits for.
SET NAMES utf8mb4;
SET time_zone = '+00:00';

-- The streaming form of every seeded value: one rows event holding several rows (source.row 0..n).
INSERT INTO all_types (c_bool, c_bit1, c_bit10, c_bit64, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u,
	c_mediumint, c_mediumint_u, c_int, c_int_u, c_bigint, c_bigint_u, c_float, c_double, c_decimal, c_decimal_wide,
	c_numeric_int, c_char, c_varchar, c_text, c_longtext, c_binary, c_varbinary, c_blob, c_json, c_enum, c_set,
	c_year, c_date, c_time, c_time3, c_time6, c_datetime, c_datetime3, c_datetime6, c_timestamp, c_timestamp3,
	c_timestamp6, c_point, c_geometry)
SELECT c_bool, c_bit1, c_bit10, c_bit64, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u,
	c_mediumint, c_mediumint_u, c_int, c_int_u, c_bigint, c_bigint_u, c_float, c_double, c_decimal, c_decimal_wide,
	c_numeric_int, c_char, c_varchar, c_text, c_longtext, c_binary, c_varbinary, c_blob, c_json, c_enum, c_set,
	c_year, c_date, c_time, c_time3, c_time6, c_datetime, c_datetime3, c_datetime6, c_timestamp, c_timestamp3,
	c_timestamp6, c_point, c_geometry
FROM all_types ORDER BY id;

INSERT INTO mariadb_types SELECT id + 10, c_uuid FROM mariadb_types ORDER BY id;

-- Defaults filled in by the server (d_ts set explicitly: CURRENT_TIMESTAMP would differ per run).
INSERT INTO defaults_tbl (id, d_ts) VALUES (2, '2001-01-01 00:00:00');

INSERT INTO ts_fractions SELECT id + 10, ts0, ts2, ts3, ts6 FROM ts_fractions ORDER BY id;

INSERT INTO zero_dates SELECT id + 10, zd, zd_nn, zdt, zdt_nn, zts, zts_nn FROM zero_dates ORDER BY id;

INSERT INTO unicode_tbl SELECT id + 10, c_utf8mb4, c_latin1, c_text_utf8 FROM unicode_tbl ORDER BY id;

-- A single-row insert with a value longer than a few kB, and JSON that MariaDB stores as given.
INSERT INTO all_types (c_longtext, c_json, c_varchar)
VALUES (REPEAT('0123456789', 500), '{"b":[true,null,1.5e3],"u":"\\u00e9ñ"}', 'big');

-- Updates: one column, several columns, a NULL-ing update, and one statement updating two rows.
UPDATE all_types SET c_varchar = 'updated' WHERE id = 1;
UPDATE all_types SET c_json = '{"b": [true, null]}', c_enum = 'large', c_set = 'b', c_bit10 = b'1', c_time6 = '00:00:01.5',
	c_timestamp6 = '2000-01-01 00:00:00.5' WHERE id = 5;
UPDATE all_types SET c_int = NULL, c_text = NULL WHERE id = 1;
UPDATE composite_pk SET v = 'both' WHERE k1 = 1;

-- Primary key change: Debezium emits a delete, a tombstone and a create.
UPDATE composite_pk SET k2 = 'z' WHERE k1 = 2 AND k2 = 'a';

-- Tables without a key.
UPDATE no_pk SET b = 'uno' WHERE a = 1;
DELETE FROM no_pk WHERE a IS NULL;

-- Deletes (each followed by a tombstone unless tombstones.on.delete=false).
DELETE FROM all_types WHERE id = 4;
DELETE FROM composite_pk WHERE k1 = 1 AND k2 = 'b';

-- One transaction spanning several tables and event kinds.
BEGIN;
INSERT INTO composite_pk VALUES (3, 'c', 'in tx');
UPDATE unicode_tbl SET c_utf8mb4 = 'ümlaut ✓' WHERE id = 1;
DELETE FROM mariadb_types WHERE id = 4;
INSERT INTO composite_pk VALUES (3, 'd', 'in tx 2');
COMMIT;

-- A rolled-back transaction leaves nothing in the binlog.
BEGIN;
INSERT INTO composite_pk VALUES (9, 'r', 'rolled back');
ROLLBACK;

-- DDL mid-stream: add and retype columns, then use the new shape.
ALTER TABLE alter_me ADD COLUMN extra VARCHAR(10) DEFAULT 'x', MODIFY v BIGINT;
INSERT INTO alter_me (id, v) VALUES (2, 9999999999);
UPDATE alter_me SET v = 11, extra = 'y' WHERE id = 1;

-- A table created, renamed and dropped mid-stream.
CREATE TABLE created_mid (id INT NOT NULL PRIMARY KEY, note TEXT);
INSERT INTO created_mid VALUES (1, 'new table');
ALTER TABLE created_mid RENAME TO renamed_mid;
INSERT INTO renamed_mid VALUES (2, 'renamed');
DROP TABLE renamed_mid;

-- TRUNCATE arrives as a query event.
TRUNCATE TABLE truncate_me;
INSERT INTO truncate_me VALUES (3, 'three');

INSERT INTO cdcd_marker (note) VALUES ('cdcd-golden-end');
