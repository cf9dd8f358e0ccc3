-- Outbox events of the transforms-outbox variant, run before corpus/changes.sql (whose end marker stays last).
-- Two aggregate types route to two topics; an empty and a null payload become tombstones
-- (route.tombstone.on.empty.payload); the update and the delete of outbox rows are skipped with a warning.
INSERT INTO public.outbox VALUES
	('6f1c0a8e-0000-4000-8000-000000000001', 'order', 'o-1', 'OrderCreated', '{"id":1,"total":9.5}'),
	('6f1c0a8e-0000-4000-8000-000000000002', 'customer', 'c-7', 'CustomerRenamed', '{"name":"Ada"}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000003', 'order', 'o-1', 'OrderShipped', '{"id":1}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000004', 'order', 'o-2', 'OrderForgotten', '  ');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000005', 'order', 'o-3', 'OrderVoid', NULL);
UPDATE public.outbox SET type = 'OrderCreatedAgain' WHERE id = '6f1c0a8e-0000-4000-8000-000000000001';
DELETE FROM public.outbox WHERE id = '6f1c0a8e-0000-4000-8000-000000000002';
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000006', 'customer', 'c-7', 'CustomerDeleted', 'gone');
