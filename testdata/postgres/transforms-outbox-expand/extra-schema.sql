-- The outbox table of the transforms-outbox-expand variant, created after corpus/schema.sql: Debezium's
-- default column names, a `created` timestamp (a MicroTimestamp, the routed records' Kafka timestamp;
-- nullable, so that a null falls back to the event's ts_ms) and a text payload holding JSON, or not.
CREATE TABLE public.outbox (
	id uuid PRIMARY KEY,
	aggregatetype varchar(255) NOT NULL,
	aggregateid varchar(255) NOT NULL,
	type varchar(255) NOT NULL,
	created timestamp,
	payload text
);
