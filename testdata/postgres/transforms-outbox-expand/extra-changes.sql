-- Outbox events of the transforms-outbox-expand variant, run before corpus/changes.sql (whose end marker
-- stays last). Payloads that expand: every JSON type (ints by range, doubles, booleans, nulls, which get no
-- field, nested objects, arrays of scalars, of arrays and of objects, an empty array, which gets no field),
-- escapes, a repeated member, trailing text after the document; two aggregate types sharing one payload
-- shape (the first one's name stays on the cached value schema). Payloads that stay text: not JSON, JSON
-- not starting with '{' or '[', an inhomogeneous array, and a null payload.
INSERT INTO public.outbox VALUES
	('6f1c0a8e-0000-4000-8000-000000000011', 'order', 'o-1', 'OrderCreated', '2024-05-06 07:08:09.123456',
	 '{"id":1,"total":9.5,"round":1e2,"big":3000000000,"neg":-7,"paid":true,"note":null,"empty":[],'
	 '"customer":{"name":"Ada \u00e9\n\"q\"","tags":["vip","new"],"address":{"zip":"12345"}},'
	 '"matrix":[[1,2],[3]],"lines":[{"sku":"a","qty":2},null,{"sku":"b","qty":1}]}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000012', 'customer', 'c-7', 'CustomerCreated',
	'2024-05-06 07:08:10.5', '{"id":7}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000013', 'order', 'o-2', 'OrderShipped',
	'1999-12-31 23:59:59.999999', '{"id":3}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000014', 'order', 'o-3', 'OrderNoted',
	'2024-05-06 07:08:11', '{"k":1,"j":2.5,"k":"again"} and then some text');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000015', 'order', 'o-4', 'OrderPlain',
	'2024-05-06 07:08:12', 'not json');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000016', 'order', 'o-5', 'OrderQuoted',
	'2024-05-06 07:08:13', '"a JSON string"');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000017', 'order', 'o-6', 'OrderMixed',
	'2024-05-06 07:08:14', '{"a":[1,"x"]}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000018', 'customer', 'c-8', 'CustomerUndated',
	NULL, '{"id":8}');
INSERT INTO public.outbox VALUES ('6f1c0a8e-0000-4000-8000-000000000019', 'order', 'o-7', 'OrderVoid',
	'2024-05-06 07:08:15', NULL);
