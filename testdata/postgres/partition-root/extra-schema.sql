-- The partition-root variant (publish.via.partition.root=true): a table partitioned by list with one
-- partition before the connector starts; extra-changes.sql adds another while it streams.
CREATE TABLE public.part_root (id integer NOT NULL, region text NOT NULL, qty integer, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE public.part_root_eu PARTITION OF public.part_root FOR VALUES IN ('eu');
