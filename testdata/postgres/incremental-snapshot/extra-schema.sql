-- The incremental-snapshot variant's signal table (Debezium's documented layout) and a table that exists
-- before the connector starts and that streaming never touches: only the incremental snapshot reads it.
CREATE TABLE public.debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL);
CREATE TABLE public.inc_items (id integer PRIMARY KEY, name text NOT NULL, qty integer);
INSERT INTO public.inc_items SELECT g, 'item-' || g, g * 10 FROM generate_series(1, 25) g;
