-- Streamed changes of the converted columns: an insert with the default, an update, a delete.
INSERT INTO flags (id, f_null) VALUES (5, 1);
UPDATE flags SET f_null = 0, f_required = 0, f_unsigned = 1 WHERE id = 1;
DELETE FROM flags WHERE id = 2;
