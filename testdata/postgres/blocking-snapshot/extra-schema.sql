-- The blocking-snapshot variant's signal table and a table that exists before the connector starts and
-- that streaming never touches: only the blocking snapshot reads it.
CREATE TABLE public.debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL);
CREATE TABLE public.blk_items (id integer PRIMARY KEY, name text NOT NULL, qty integer);
INSERT INTO public.blk_items SELECT g, 'item-' || g, g * 10 FROM generate_series(1, 25) g;
