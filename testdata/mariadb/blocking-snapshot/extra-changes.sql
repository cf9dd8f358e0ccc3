-- A blocking snapshot of blk_items requested through the signal table, run before corpus/changes.sql: the
-- connector stops streaming, reads the table again, and streams the corpus changes after it.
INSERT INTO debezium_signal VALUES
	('golden-blocking-1', 'execute-snapshot', '{"data-collections": ["cdcd_golden.blk_items"], "type": "blocking"}');
