-- The columns variant's own table: a string primary key that the column options map, so the golden shows
-- that Debezium maps the value's field and leaves the key's alone.
CREATE TABLE masked_keys (
    code  varchar(8) PRIMARY KEY,
    email text,
    note  varchar(4)
);
