-- The incremental-snapshot variant's signal table (Debezium's documented layout) and a table streaming never
-- touches: the initial snapshot reads its 25 rows, and then the incremental snapshot reads them again.
CREATE TABLE debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL);
-- The connector's user writes the watermarks (INSERT; DELETE for insert_delete). A table's grant outlives
-- the table, as the server keeps it, so this is the same on every run.
GRANT INSERT, DELETE ON debezium_signal TO 'cdcd'@'%';
CREATE TABLE inc_items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT);
INSERT INTO inc_items WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 25) SELECT n, CONCAT('item-', n), n * 10 FROM s;
