-- An ad-hoc incremental snapshot of inc_items requested through the signal table, run before
-- corpus/changes.sql. 25 rows in chunks of 10 take four windows: three with rows and a last, empty one
-- that finds the table done. The corpus changes wait for the last window's close watermark, so the end
-- marker comes after the snapshot, however fast the connector is (bounded: 120 s, then an error). The
-- wait only reads: it writes nothing to the binlog.
INSERT INTO debezium_signal VALUES
	('golden-signal-1', 'execute-snapshot', '{"data-collections": ["cdcd_golden.inc_items"], "type": "incremental"}');
DELIMITER //
BEGIN NOT ATOMIC
	DECLARE i INT DEFAULT 0;
	WHILE (SELECT count(*) FROM debezium_signal WHERE type = 'snapshot-window-close') < 4 DO
		IF i >= 1200 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the incremental snapshot did not write its fourth close watermark within 120 s';
		END IF;
		DO SLEEP(0.1);
		SET i = i + 1;
	END WHILE;
END //
DELIMITER ;
