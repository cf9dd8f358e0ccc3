package ddl

import "github.com/cdcd/cdcd/source/mysql/tables"

func tablesID(db, table string) tables.ID { return tables.ID{Database: db, Table: table} }
