-- The demo schema cdcd captures in docker-compose.yml (table.include.list=inventory.customers).
CREATE SCHEMA inventory;
CREATE TABLE inventory.customers (
	id         serial PRIMARY KEY,
	first_name text NOT NULL,
	last_name  text NOT NULL,
	email      text UNIQUE NOT NULL
);
INSERT INTO inventory.customers (first_name, last_name, email) VALUES
	('Sally', 'Thomas', 'sally.thomas@acme.com'),
	('George', 'Bailey', 'gbailey@foobar.com'),
	('Edward', 'Walker', 'ed@walker.com');
