-- Changes of both partitions, the second created while the connector streams, and a row moved from one
-- partition to the other (pgoutput sends a delete and an insert): through the root, all are part_root's.
INSERT INTO public.part_root VALUES (1, 'eu', 10), (2, 'eu', 20);
CREATE TABLE public.part_root_us PARTITION OF public.part_root FOR VALUES IN ('us');
INSERT INTO public.part_root VALUES (3, 'us', 30);
UPDATE public.part_root SET qty = 31 WHERE id = 3;
UPDATE public.part_root SET region = 'us' WHERE id = 2;
DELETE FROM public.part_root WHERE id = 1;
