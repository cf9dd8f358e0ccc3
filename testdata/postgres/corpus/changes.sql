-- Golden corpus changes (PostgreSQL 15): run against a fresh database holding schema.sql while the connector
-- streams. Literal values only (deterministic functions such as repeat() and generate_series() are fine),
-- so a replay on another fresh database writes identical rows; only times and positions differ.
\set ON_ERROR_STOP on
SET TIME ZONE 'UTC';

-- Numbers: ordinary, extreme, special floats, all-NULL.
INSERT INTO numeric_types (bool_col, bit1, bit8, bit12, varbit_col, i2, i4, i8, oid_col, f4, f8, num_ps, num_p, num_u, money_col)
VALUES (true, B'1', B'10100101', B'101010101010', B'1101', 12, 1234, 1234567890123, 42, 1.5, 0.1, 1234567.891, 12345678901234567890, 3.14159265358979323846, 12.34);
INSERT INTO numeric_types (bool_col, bit1, bit8, bit12, varbit_col, i2, i4, i8, oid_col, f4, f8, num_ps, num_p, num_u, money_col)
VALUES (false, B'0', B'00000000', B'000000000001', B'', -32768, -2147483648, -9223372036854775808, 4294967295, 3.4028235e38, 1e21, -9999999.999, -99999999999999999999, -0.000000000000000000001, -92233720368547758.08);
INSERT INTO numeric_types (bool_col, i2, i4, i8, f4, f8, num_ps, num_p, num_u, money_col)
VALUES (true, 32767, 2147483647, 9223372036854775807, 1.0e-7, 1.0e-5, 0.001, 0, 100, 92233720368547758.07);
INSERT INTO numeric_types (f4, f8, num_u) VALUES ('NaN', 'NaN', 'NaN');
INSERT INTO numeric_types (f4, f8) VALUES ('Infinity', '-Infinity');
INSERT INTO numeric_types (f4, f8, num_u) VALUES (-0.0, 123456789.123, 1.0);
INSERT INTO numeric_types DEFAULT VALUES;

-- Dates and times: ordinary, extremes, infinities, NULLs.
INSERT INTO time_types VALUES (1, '2024-02-29', '13:14:15', '13:14:15.123', '13:14:15.123456', '13:14:15.5',
    '2024-02-29 13:14:15', '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.1',
    '2024-02-29 13:14:15.120000+02', '2024-02-29 13:14:15+00', '2024-02-29 13:14:15.1+05:30',
    '13:14:15.5+02', '13:14:15.123-03:30', '1 year 2 months 3 days 04:05:06.789', '3 years 5 months');
INSERT INTO time_types VALUES (2, '1970-01-01', '00:00:00', '00:00:00', '00:00:00', '00:00:00',
    '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00',
    '1970-01-01 00:00:00+00', '1970-01-01 00:00:00+00', '1970-01-01 00:00:00+00',
    '00:00:00+00', '00:00:00+00', '0 seconds', '0 months');
INSERT INTO time_types VALUES (3, '0001-01-01', '23:59:59', '23:59:59.999', '23:59:59.999999', '24:00:00',
    '0001-01-01 00:00:00', '1969-12-31 23:59:59.999', '9999-12-31 23:59:59.999999', '1900-06-15 12:00:00.000001',
    '1900-01-01 00:00:00.000001+00', '9999-12-31 23:59:59+00', '2000-01-01 00:00:00.001+00',
    '23:59:59.999999+14', '00:00:00.001-12', '-1 days -02:03:04.5', '-1 years -1 months');
INSERT INTO time_types VALUES (4, 'infinity', NULL, NULL, NULL, NULL, 'infinity', '-infinity', NULL, NULL,
    'infinity', '-infinity', NULL, NULL, NULL, '178000000 years', NULL);
INSERT INTO time_types (id) VALUES (5);

-- Strings, binary, documents and the rest of the scalar types.
INSERT INTO text_types VALUES (1, 'ab', 'varchar', 'text', 'CiText', 'a_name', '\x00ff10',
    '{"b": 1, "a": [1, 2.50, "x"]}', '{"b": 1, "a": [1, 2.50, "x"]}', '<a b="1">text</a>',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy', 5, 'top.science.astronomy', '"a"=>"1", "b"=>NULL',
    '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', '(1.5,-2.25)');
INSERT INTO text_types VALUES (2, 'ünï', 'héllo wörld ✓', E'😀 emoji, "quotes", back\\slash, tab\t, newline\n, \u00e9', 'ÄÖÜ', 'ñame', '\x',
    '[]', '{}', '<?xml version="1.0"?><r>ü</r>', '00000000-0000-0000-0000-000000000000', 'sad', 2147483647, 'a', '',
    '::1', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff', '00:00:00:00:00:00:00:00', '(0,0)');
INSERT INTO text_types VALUES (3, '', '', '', '', '', '\xdeadbeef', 'null', '"str"', '<e/>',
    'ffffffff-ffff-ffff-ffff-ffffffffffff', 'ok', 1, 'x.y', '"k"=>""', '0.0.0.0', '0.0.0.0/0',
    '00:00:00:00:00:00', 'ff:ff:ff:ff:ff:ff:ff:ff', '(-1e10,1e-10)');
INSERT INTO text_types (id) VALUES (4);

INSERT INTO range_types VALUES (1, '[1,10)', '[-5,5]', '(1.5,2.5]', '[2024-01-01 00:00,2024-01-02 00:00)',
    '[2024-01-01 00:00+00,2024-01-02 00:00+02)', '[2024-01-01,2024-02-01)');
INSERT INTO range_types VALUES (2, 'empty', '(,)', '[0,)', '(,2024-01-01 12:00:00.5]', 'empty', '[2024-01-01,)');
INSERT INTO range_types (id) VALUES (3);

INSERT INTO array_types VALUES (1, '{1,2,3}', '{9223372036854775807,-1}', '{"a","b c","","NULL",null}', '{1.5,NaN,-0.001}',
    '{sad,happy}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', '{2020-01-01,1969-12-31}', '{true,false,null}',
    '{1.5,0.1,NaN,Infinity,-Infinity}', '{"2020-01-01 00:00:00+02","1970-01-01 00:00:00.5+00"}',
    ARRAY['{"a": 1}'::jsonb, '[]'::jsonb], '{"x","ÿ"}');
INSERT INTO array_types VALUES (2, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}');
INSERT INTO array_types VALUES (3, '{NULL}', '{1,NULL}', '{NULL}', '{NULL,1}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}');
INSERT INTO array_types (id) VALUES (4);

-- Defaults: every column given; only the required ones given; nullable-with-default columns set to NULL.
INSERT INTO defaults_table (nn_int, nn_text, nn_bool, nn_num, nn_f8, nn_date, nn_ts, nn_tstz, nn_bytes, nn_uuid, nn_jsonb, nn_mood, nn_nodefault, ticket, opt_const, opt_text, opt_none, created_date)
VALUES (1, 'one', false, 9.99, 1.25, '2021-01-01', '2021-01-01 01:01:01', '2021-01-01 01:01:01+00', '\x00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', 'sad', 'given', 1, 2, 'y', 3, '2021-01-01');
INSERT INTO defaults_table (nn_tstz, nn_uuid, nn_nodefault, created_date)
VALUES ('2022-02-02 02:02:02+00', 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', 'defaults', '2022-02-02');
INSERT INTO defaults_table (nn_tstz, nn_uuid, nn_nodefault, ticket, opt_const, opt_text, created_date)
VALUES ('2023-03-03 03:03:03+00', 'c0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13', 'nulls', NULL, NULL, NULL, NULL);

-- Keys and replica identities.
INSERT INTO no_pk VALUES (1, 'one'), (2, 'two'), (NULL, NULL);
INSERT INTO no_pk_full VALUES (1, 'one'), (2, 'two');
UPDATE no_pk_full SET b = 'uno' WHERE a = 1;
DELETE FROM no_pk_full WHERE a = 2;
INSERT INTO composite_pk VALUES (1, 1, 'a'), (1, 2, 'b'), (2, 1, 'c');
UPDATE composite_pk SET v = 'bb' WHERE tenant = 1 AND id = 2;
UPDATE composite_pk SET id = 3 WHERE tenant = 2 AND id = 1;
INSERT INTO full_identity VALUES (1, 'one', 1.00), (2, 'two', NULL);
UPDATE full_identity SET v = 'uno', n = 1.50 WHERE id = 1;
DELETE FROM full_identity WHERE id = 2;

-- Updates and deletes under REPLICA IDENTITY DEFAULT; a primary-key change.
UPDATE numeric_types SET f8 = 2.5, num_u = 2.50 WHERE id = 1;
UPDATE numeric_types SET id = 100 WHERE id = 2;
DELETE FROM numeric_types WHERE id = 3;
UPDATE text_types SET txt = 'changed', hs = '"z"=>"26"' WHERE id = 1;
DELETE FROM defaults_table WHERE id = 1;
DELETE FROM time_types WHERE id = 2;
DELETE FROM array_types WHERE id = 3;

-- One transaction with several tables and a transactional logical message.
BEGIN;
INSERT INTO composite_pk VALUES (3, 1, 'in tx');
SELECT pg_logical_emit_message(true, 'cdcd-tx', 'transactional message') IS NOT NULL AS emitted;
UPDATE full_identity SET v = 'in tx' WHERE id = 1;
DELETE FROM composite_pk WHERE tenant = 1 AND id = 1;
COMMIT;

-- A non-transactional logical message with binary content.
SELECT pg_logical_emit_message(false, 'cdcd-nontx', '\x00ff10'::bytea) IS NOT NULL AS emitted;

-- TOAST: values stored out of line; updates that leave them alone send them as unchanged-TOAST.
INSERT INTO toast_table VALUES (1, 1,
    repeat('abcdefghij', 300),
    decode(repeat('0123456789abcdef', 250), 'hex'),
    ('{"k": "' || repeat('x', 3000) || '"}')::jsonb,
    array_fill('abcdefghij'::text, ARRAY[400]),
    ARRAY(SELECT g FROM generate_series(1, 1000) AS g),
    hstore(ARRAY(SELECT 'k' || g FROM generate_series(1, 300) AS g), ARRAY(SELECT 'v' || g FROM generate_series(1, 300) AS g)));
UPDATE toast_table SET counter = 2 WHERE id = 1;
UPDATE toast_table SET counter = 3, big_text = repeat('z', 3000) WHERE id = 1;
DELETE FROM toast_table WHERE id = 1;

-- TRUNCATE (emitted only when skipped.operations allows it).
TRUNCATE no_pk;

-- A column added mid-stream, then more changes to that table.
ALTER TABLE composite_pk ADD COLUMN extra integer DEFAULT 7;
ALTER TABLE composite_pk ADD COLUMN note text;
INSERT INTO composite_pk (tenant, id, v, note) VALUES (4, 1, 'after alter', 'noted');
UPDATE composite_pk SET extra = 8 WHERE tenant = 1 AND id = 2;
INSERT INTO composite_pk (tenant, id, v, extra) VALUES (4, 2, 'null extra', NULL);

-- End marker: the golden runner waits for this message before capturing.
SELECT pg_logical_emit_message(true, 'cdcd-golden-end', 'end') IS NOT NULL AS emitted;
