-- The boolean-converter variant's table: TINYINT(1) columns the converter makes booleans (nullable, NOT
-- NULL with a default, unsigned), one the selector leaves out, and a TINYINT(4) the length check leaves out.
CREATE TABLE flags (
	id INT PRIMARY KEY,
	f_null TINYINT(1),
	f_required TINYINT(1) NOT NULL DEFAULT 1,
	f_unsigned TINYINT(1) UNSIGNED,
	f_unselected TINYINT(1),
	f_wide TINYINT(4)
);
INSERT INTO flags VALUES (1, 1, 0, 1, 1, 1), (2, 0, 1, 0, 0, 0), (3, NULL, 1, NULL, NULL, NULL), (4, -1, 5, 2, -1, -1);
