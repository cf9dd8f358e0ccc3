-- Rows present before the connector starts: read by the initial snapshot (op "r").
SET NAMES utf8mb4;
SET time_zone = '+00:00';

INSERT INTO all_types (c_bool, c_bit1, c_bit10, c_bit64, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u,
	c_mediumint, c_mediumint_u, c_int, c_int_u, c_bigint, c_bigint_u, c_float, c_double, c_decimal, c_decimal_wide,
	c_numeric_int, c_char, c_varchar, c_text, c_longtext, c_binary, c_varbinary, c_blob, c_json, c_enum, c_set,
	c_year, c_date, c_time, c_time3, c_time6, c_datetime, c_datetime3, c_datetime6, c_timestamp, c_timestamp3,
	c_timestamp6, c_point, c_geometry)
VALUES
	-- ordinary values
	(TRUE, b'1', b'1010101010', b'1000000000000000000000000000000000000000000000000000000000000001', 12, 200,
	 1234, 60000, 123456, 16000000, 123456789, 4000000000, 1234567890123, 12345678901234567890, 3.14, 2.718281828459045,
	 1234567.891, 12345678901234567890.0123456789, 42, 'abc', 'hello, world', 'some text', 'long text',
	 x'00ff10', x'deadbeef', x'0102030405', '{"k": 1, "a": [1, 2], "s": "x"}', 'medium', 'a,c',
	 2024, '2024-02-29', '12:34:56', '23:59:59.123', '-12:34:56.123456', '2024-02-29 12:34:56',
	 '2024-02-29 12:34:56.789', '2024-02-29 12:34:56.789012', '2024-02-29 12:34:56', '2024-02-29 12:34:56.789',
	 '2024-02-29 12:34:56.789012', ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')),
	-- maxima
	(FALSE, b'0', b'1111111111', b'1111111111111111111111111111111111111111111111111111111111111111', 127, 255,
	 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615,
	 3.4028234e38, 1.7976931348623157e308, 9999999.999, 9999999999999999999999999999.9999999999, 99999,
	 'zzzzzzzzzz', REPEAT('v', 255), '', '', x'ffffffff', x'', x'', '[]', 'large', 'a,b,c',
	 2155, '9999-12-31', '838:59:59', '838:59:59.000', '838:59:59.000000', '9999-12-31 23:59:59',
	 '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', '2038-01-19 03:14:07.999',
	 '2038-01-19 03:14:07.999999', ST_GeomFromText('POINT(-180 90)'),
	 ST_GeomFromText('POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))')),
	-- minima
	(NULL, NULL, b'0', b'0', -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
	 -1.175494e-38, -2.2250738585072014e-308, -9999999.999, -9999999999999999999999999999.9999999999, -99999,
	 '', '', NULL, NULL, x'00000000', NULL, NULL, 'null', 'small', '',
	 1901, '1000-01-01', '-838:59:59', '-838:59:59.000', '-00:00:00.000001', '1000-01-01 00:00:00',
	 '1000-01-01 00:00:00.000', '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01', '1970-01-01 00:00:01.000',
	 '1970-01-01 00:00:01.000001', ST_GeomFromText('POINT(0 0)'), ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1))')),
	-- all NULL
	(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL);

INSERT INTO mariadb_types VALUES
	(1, '123e4567-e89b-12d3-a456-426614174000'),
	(2, '00000000-0000-0000-0000-000000000000'),
	(3, 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
	(4, NULL);

INSERT INTO defaults_tbl VALUES
	(1, 1, 1, FALSE, b'0001', 0.5, 0.25, 0.01, 'v', 't', x'01', 'x', 'b', 2000, '2000-01-01', '01:02:03.04',
	 '2000-01-01 01:02:03.004', '2000-01-01 01:02:03', '2000-01-01 01:02:03.000004', NULL);

INSERT INTO ts_fractions VALUES
	(1, '2000-01-01 00:00:00', '2000-01-01 00:00:00.00', '2000-01-01 00:00:00.000', '2000-01-01 00:00:00.000000'),
	(2, '2000-01-01 00:00:01', '2000-01-01 00:00:01.50', '2000-01-01 00:00:01.500', '2000-01-01 00:00:01.500000'),
	(3, '2000-01-01 00:00:02', '2000-01-01 00:00:02.12', '2000-01-01 00:00:02.120', '2000-01-01 00:00:02.120000'),
	(4, '2000-01-01 00:00:03', '2000-01-01 00:00:03.01', '2000-01-01 00:00:03.001', '2000-01-01 00:00:03.000001'),
	(5, '2024-06-30 23:59:59', '2024-06-30 23:59:59.99', '2024-06-30 23:59:59.999', '2024-06-30 23:59:59.999990');

INSERT INTO zero_dates VALUES
	(1, '0000-00-00', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '0000-00-00 00:00:00',
	 '0000-00-00 00:00:00.000000'),
	(2, '2020-00-15', '2020-01-00', '2020-00-00 10:00:00', '2020-01-01 00:00:00.000', NULL,
	 '2020-01-01 00:00:00.000000');

INSERT INTO unicode_tbl VALUES
	(1, 'héllo wörld ✓ 日本語 😀', 'café crème', 'ascii'),
	(2, 'é combining + 𝄞 clef', 'Zürich', 'naïve ünïcödé'),
	(3, '', '', '');

INSERT INTO no_pk VALUES (1, 'one'), (1, 'one'), (NULL, NULL);

INSERT INTO composite_pk VALUES (1, 'a', 'first'), (1, 'b', 'second'), (2, 'a', 'third');

INSERT INTO alter_me VALUES (1, 10);

INSERT INTO truncate_me VALUES (1, 'one'), (2, 'two');
