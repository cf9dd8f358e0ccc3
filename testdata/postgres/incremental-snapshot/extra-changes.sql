-- An ad-hoc incremental snapshot of inc_items requested through the signal table, run before
-- corpus/changes.sql. 25 rows in chunks of 10 take four windows: three with rows and a last, empty one
-- that finds the table done. The corpus changes wait for the last window's close watermark, so the end
-- marker comes after the snapshot, however fast the connector is (bounded: 120 s, then an error).
INSERT INTO public.debezium_signal VALUES
	('golden-signal-1', 'execute-snapshot', '{"data-collections": ["public.inc_items"], "type": "incremental"}');
DO $$
BEGIN
	FOR i IN 1..1200 LOOP
		IF (SELECT count(*) FROM public.debezium_signal WHERE type = 'snapshot-window-close') >= 4 THEN
			RETURN;
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RAISE EXCEPTION 'the incremental snapshot did not write its fourth close watermark within 120 s';
END $$;
