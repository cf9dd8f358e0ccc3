-- The columns variant's changes: inserts, an update, a primary-key change and a delete of masked_keys.
-- 'ñ😀z' is four UTF-16 units, so truncating it to three keeps the whole emoji.
INSERT INTO masked_keys VALUES ('abcdef', 'alice@example.org', 'hey'), ('ñ😀z', 'bøb😀@example.org', NULL);
UPDATE masked_keys SET email = 'carol@example.org' WHERE code = 'abcdef';
UPDATE masked_keys SET code = 'xyz' WHERE code = 'abcdef';
DELETE FROM masked_keys WHERE code = 'ñ😀z';
