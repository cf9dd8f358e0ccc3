-- The blocking-snapshot variant's signal table (Debezium's documented layout) and a table streaming never
-- touches: the initial snapshot reads its 5 rows, and the blocking snapshot reads them again.
CREATE TABLE debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL);
CREATE TABLE blk_items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT);
INSERT INTO blk_items VALUES (1, 'item-1', 10), (2, 'item-2', 20), (3, 'item-3', 30), (4, 'item-4', 40), (5, 'item-5', 50);
