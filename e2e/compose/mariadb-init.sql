-- The capture user and demo table for a binlog connector reading the compose MariaDB.
CREATE USER IF NOT EXISTS 'cdcd'@'%' IDENTIFIED BY 'cdcd';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR ON *.* TO 'cdcd'@'%';
CREATE TABLE IF NOT EXISTS inventory.customers (
	id         INT AUTO_INCREMENT PRIMARY KEY,
	first_name VARCHAR(255) NOT NULL,
	last_name  VARCHAR(255) NOT NULL,
	email      VARCHAR(255) UNIQUE NOT NULL
);
INSERT INTO inventory.customers (first_name, last_name, email) VALUES
	('Sally', 'Thomas', 'sally.thomas@acme.com'),
	('George', 'Bailey', 'gbailey@foobar.com');
