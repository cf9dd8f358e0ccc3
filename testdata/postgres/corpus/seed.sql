-- Rows present before the connector starts, for the snapshot-initial golden (read as op "r").
-- Keys are disjoint from those changes.sql writes.
\set ON_ERROR_STOP on
SET TIME ZONE 'UTC';
INSERT INTO numeric_types (id, bool_col, i4, f8, num_ps, num_u, money_col) VALUES (1001, true, 1, 0.5, 1.5, 1.25, 1.00);
INSERT INTO numeric_types (id, f8) VALUES (1002, 1e-7);
INSERT INTO time_types VALUES (1001, '2001-01-01', '01:01:01', '01:01:01.001', '01:01:01.000001', '01:01:01',
    '2001-01-01 01:01:01', '2001-01-01 01:01:01.001', '2001-01-01 01:01:01.000001', '2001-01-01 01:01:01',
    '2001-01-01 01:01:01.5+00', '2001-01-01 01:01:01+00', '2001-01-01 01:01:01.001+00',
    '01:01:01+01', '01:01:01.001+00', '1 day', '1 year');
INSERT INTO text_types (id, vc, nm, jb, hs, u, m) VALUES (1001, 'seeded', 'seeded_name', '{"s": true}', '"s"=>"1"', 'd0eebc99-9c0b-4ef8-bb6d-6bb9bd380a14', 'ok');
INSERT INTO composite_pk VALUES (9, 9, 'seed');
INSERT INTO no_pk VALUES (9, 'seed');
INSERT INTO defaults_table (id, nn_tstz, nn_uuid, nn_nodefault, created_date) VALUES (1001, '2001-01-01 00:00:00+00', 'e0eebc99-9c0b-4ef8-bb6d-6bb9bd380a15', 'seeded', '2001-01-01');
