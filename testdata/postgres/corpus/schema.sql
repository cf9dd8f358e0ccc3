-- Golden corpus schema (PostgreSQL 15): one table per type family plus the key / replica-identity /
-- TOAST shapes Debezium treats differently. Applied to a fresh database before the connector starts.
-- Every value the change script writes is a literal, so a replay on a fresh database writes the same rows.
CREATE EXTENSION IF NOT EXISTS hstore;
CREATE EXTENSION IF NOT EXISTS citext;
CREATE EXTENSION IF NOT EXISTS ltree;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE SEQUENCE ticket_seq START 1000;

-- Numbers, booleans and bit strings.
CREATE TABLE numeric_types (
    id          serial PRIMARY KEY,
    bool_col    boolean,
    bit1        bit(1),
    bit8        bit(8),
    bit12       bit(12),
    varbit_col  varbit(20),
    i2          smallint,
    i4          integer,
    i8          bigint,
    ss          smallserial,
    bs          bigserial,
    oid_col     oid,
    f4          real,
    f8          double precision,
    num_ps      numeric(10, 3),
    num_p       numeric(20),
    num_u       numeric,
    money_col   money
);
COMMENT ON COLUMN numeric_types.f8 IS 'a double, printed the Java way';

-- Dates, times and intervals at several precisions.
CREATE TABLE time_types (
    id        integer PRIMARY KEY,
    d         date,
    t0        time(0),
    t3        time(3),
    t6        time(6),
    t_plain   time,
    ts0       timestamp(0),
    ts3       timestamp(3),
    ts6       timestamp(6),
    ts_plain  timestamp,
    tstz      timestamptz,
    tstz0     timestamptz(0),
    tstz3     timestamptz(3),
    ttz       timetz,
    ttz3      timetz(3),
    iv        interval,
    iv_ym     interval year to month
);

-- Strings, binary, documents, identifiers, network types, extension types, enum and domain.
CREATE TABLE text_types (
    id         bigint PRIMARY KEY,
    ch         char(5),
    vc         varchar(20),
    txt        text,
    ci         citext,
    nm         name,
    bin        bytea,
    js         json,
    jb         jsonb,
    x          xml,
    u          uuid,
    m          mood,
    dom        positive_int,
    lt         ltree,
    hs         hstore,
    inet_c     inet,
    cidr_c     cidr,
    mac        macaddr,
    mac8       macaddr8,
    pt         point
);

CREATE TABLE range_types (
    id    integer PRIMARY KEY,
    i4r   int4range,
    i8r   int8range,
    nr    numrange,
    tsr   tsrange,
    tstzr tstzrange,
    dr    daterange
);

CREATE TABLE array_types (
    id        integer PRIMARY KEY,
    ints      integer[],
    bigints   bigint[],
    texts     text[],
    nums      numeric[],
    moods     mood[],
    uuids     uuid[],
    dates     date[],
    bools     boolean[],
    f8s       double precision[],
    tstzs     timestamptz[],
    jbs       jsonb[],
    varchars  varchar(10)[]
);

-- Defaults (constant and function), NOT NULL against nullable, comments. REPLICA IDENTITY DEFAULT, so
-- a DELETE's before-image carries only the key: the NOT NULL columns show Debezium's fallbacks.
CREATE TABLE defaults_table (
    id            serial PRIMARY KEY,
    nn_int        integer NOT NULL DEFAULT 42,
    nn_text       text NOT NULL DEFAULT 'dflt',
    nn_bool       boolean NOT NULL DEFAULT true,
    nn_num        numeric(8, 2) NOT NULL DEFAULT 1.50,
    nn_f8         double precision NOT NULL DEFAULT 2.5,
    nn_date       date NOT NULL DEFAULT '2020-02-02',
    nn_ts         timestamp NOT NULL DEFAULT '2020-02-02 10:00:00',
    nn_tstz       timestamptz NOT NULL DEFAULT now(),
    nn_bytes      bytea NOT NULL DEFAULT '\x0102',
    nn_uuid       uuid NOT NULL DEFAULT gen_random_uuid(),
    nn_jsonb      jsonb NOT NULL DEFAULT '{}',
    nn_mood       mood NOT NULL DEFAULT 'ok',
    nn_nodefault  text NOT NULL,
    ticket        bigint DEFAULT nextval('ticket_seq'),
    opt_const     integer DEFAULT 7,
    opt_text      varchar(10) DEFAULT 'x',
    opt_none      integer,
    created_date  date DEFAULT CURRENT_DATE
);
COMMENT ON COLUMN defaults_table.nn_int IS 'not null with a constant default';
COMMENT ON COLUMN defaults_table.opt_const IS 'nullable "quoted" comment';

-- No primary key: inserts only (DEFAULT identity without a key cannot publish UPDATE/DELETE).
CREATE TABLE no_pk (
    a integer,
    b text
);

-- No primary key but REPLICA IDENTITY FULL: updates and deletes with whole-row images, null key.
CREATE TABLE no_pk_full (
    a integer,
    b text
);
ALTER TABLE no_pk_full REPLICA IDENTITY FULL;

CREATE TABLE composite_pk (
    tenant integer NOT NULL,
    id     integer NOT NULL,
    v      text,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE full_identity (
    id  integer PRIMARY KEY,
    v   text NOT NULL,
    n   numeric(6, 2)
);
ALTER TABLE full_identity REPLICA IDENTITY FULL;

-- Columns stored out of line and uncompressed, so an update that leaves them alone makes pgoutput send
-- them as unchanged-TOAST ('u'): Debezium's placeholder per type.
CREATE TABLE toast_table (
    id      integer PRIMARY KEY,
    counter integer,
    big_text  text,
    big_bytes bytea,
    big_json  jsonb,
    big_texts text[],
    big_ints  integer[],
    big_hs    hstore
);
ALTER TABLE toast_table ALTER COLUMN big_text SET STORAGE EXTERNAL;
ALTER TABLE toast_table ALTER COLUMN big_bytes SET STORAGE EXTERNAL;
ALTER TABLE toast_table ALTER COLUMN big_json SET STORAGE EXTERNAL;
ALTER TABLE toast_table ALTER COLUMN big_texts SET STORAGE EXTERNAL;
ALTER TABLE toast_table ALTER COLUMN big_ints SET STORAGE EXTERNAL;
ALTER TABLE toast_table ALTER COLUMN big_hs SET STORAGE EXTERNAL;
