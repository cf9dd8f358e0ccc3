-- The outbox table of the transforms-outbox variant, created after corpus/schema.sql: Debezium's default
-- column names, a uuid event id (a header carrying io.debezium.data.Uuid) and a nullable text payload.
CREATE TABLE public.outbox (
	id uuid PRIMARY KEY,
	aggregatetype varchar(255) NOT NULL,
	aggregateid varchar(255) NOT NULL,
	type varchar(255) NOT NULL,
	payload text
);
