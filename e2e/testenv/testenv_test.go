package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// recordingTB stands in for a *testing.T so that requireService's skip and fail paths can be
// observed. Like the real ones, Skipf and Fatalf end the calling goroutine.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	message         string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.message = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed, r.message = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runRequire runs requireService on a recordingTB in a goroutine of its own, as Goexit demands.
func runRequire(ping func(context.Context) error) *recordingTB {
	rec := &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		requireService(rec, "postgres", ping)
	}()
	<-done
	return rec
}

func TestRequireService(t *testing.T) {
	down := func(context.Context) error { return errors.New("connection refused") }
	up := func(context.Context) error { return nil }
	tests := []struct {
		name        string
		env         string
		ping        func(context.Context) error
		wantSkipped bool
		wantFailed  bool
		wantMessage string
	}{
		{name: "unset skips without pinging", env: "", ping: nil, wantSkipped: true, wantMessage: "e2e/services.sh start postgres"},
		{name: "zero skips", env: "0", ping: nil, wantSkipped: true},
		{name: "enabled and down fails", env: "1", ping: down, wantFailed: true, wantMessage: "connection refused"},
		{name: "enabled and up passes", env: "1", ping: up},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnableEnv, tc.env)
			rec := runRequire(tc.ping) // a nil ping panics if it is called
			if rec.skipped != tc.wantSkipped || rec.failed != tc.wantFailed {
				t.Fatalf("skipped=%v failed=%v (%q), want skipped=%v failed=%v",
					rec.skipped, rec.failed, rec.message, tc.wantSkipped, tc.wantFailed)
			}
			if !strings.Contains(rec.message, tc.wantMessage) {
				t.Errorf("message %q does not mention %q", rec.message, tc.wantMessage)
			}
		})
	}
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]*_[0-9a-f]{8}$`)

func TestUniqueName(t *testing.T) {
	tests := []struct {
		testName   string
		maxLen     int
		wantPrefix string
	}{
		{"TestSnapshot", 63, "testsnapshot_"},
		{"TestReader/UPDATE with key change#01", 63, "testreader_update_with_key_change_01_"},
		{"Test__odd--Name/", 63, "test_odd_name_"},
		{"Ünïcode/ß", 63, "n_code_"},
		{"ÜÏ/ß", 63, "t_"},
		{"7digits", 63, "t_7digits_"},
		{"TestAVeryLongTestNameThatGoesOnAndOn/with_a_subtest_name_that_is_long_too", 40, "testaveryl"},
	}
	for _, tc := range tests {
		name := uniqueName(tc.testName, tc.maxLen)
		if !validName.MatchString(name) || len(name) > tc.maxLen || !strings.HasPrefix(name, tc.wantPrefix) {
			t.Errorf("uniqueName(%q, %d) = %q: want a name of at most %d [a-z0-9_] starting with %q and ending in a random suffix",
				tc.testName, tc.maxLen, name, tc.maxLen, tc.wantPrefix)
		}
	}
	if a, b := uniqueName("TestX", 63), uniqueName("TestX", 63); a == b {
		t.Errorf("two names for one test are both %q", a)
	}
}

func TestTruncatedNameDoesNotEndInSeparatorBeforeSuffix(t *testing.T) {
	// Cut right after "test_a", the base would end in "_" and give a doubled separator.
	name := uniqueName("Test/a/bcdef", len("test_a_")+9)
	if !strings.HasPrefix(name, "test_a_") || strings.Contains(name, "__") {
		t.Errorf("got %q, want test_a_ and the suffix", name)
	}
}

func TestAddressesFollowServicePortVariables(t *testing.T) {
	t.Setenv(PostgresVersionEnv, "")
	t.Setenv("CDCD_PG_PORT", "6001")
	t.Setenv("CDCD_MARIADB_PORT", "6002")
	t.Setenv("CDCD_KAFKA_PORT", "6003")
	if got, want := postgresDSN("db1"), "postgres://postgres@127.0.0.1:6001/db1?sslmode=disable"; got != want {
		t.Errorf("postgresDSN = %q, want %q", got, want)
	}
	if got, want := mariadbRoot().String(), "root:cdcd@127.0.0.1:6002"; got != want {
		t.Errorf("mariadb root DSN = %q, want %q", got, want)
	}
	if got := kafkaBrokers(); len(got) != 1 || got[0] != "127.0.0.1:6003" {
		t.Errorf("kafka brokers = %q, want [127.0.0.1:6003]", got)
	}
}

func TestAddressesDefaultToConventionPorts(t *testing.T) {
	for _, v := range []string{PostgresVersionEnv, "CDCD_PG_PORT", "CDCD_MARIADB_PORT", "CDCD_KAFKA_PORT"} {
		t.Setenv(v, "")
	}
	if got := postgresDSN("postgres"); !strings.Contains(got, "@127.0.0.1:55432/") {
		t.Errorf("postgresDSN = %q, want port 55432", got)
	}
	if got := mariadbRoot().Addr; got != "127.0.0.1:53306" {
		t.Errorf("mariadb addr = %q, want 127.0.0.1:53306", got)
	}
	if got := kafkaBrokers()[0]; got != "127.0.0.1:59092" {
		t.Errorf("kafka broker = %q, want 127.0.0.1:59092", got)
	}
}

func TestMySQLDSNRoundTrip(t *testing.T) {
	for _, d := range []MySQLDSN{
		{User: "root", Password: "cdcd", Addr: "127.0.0.1:53306"},
		{User: "cdcd", Password: "p:w@x", Addr: "127.0.0.1:53306", DB: "inventory"},
		{User: "u", Addr: "h:1"},
	} {
		got, err := ParseMySQLDSN(d.String())
		if err != nil || got != d {
			t.Errorf("ParseMySQLDSN(%q) = %+v, %v; want %+v", d.String(), got, err, d)
		}
	}
}

func TestParseMySQLDSNRejectsIncompleteDSNs(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1:53306", "root:cdcd@", ":pw@127.0.0.1:1"} {
		if d, err := ParseMySQLDSN(s); err == nil {
			t.Errorf("ParseMySQLDSN(%q) = %+v, want an error", s, d)
		}
	}
}

func TestNewTopicPrefixIsUniqueAndValid(t *testing.T) {
	a, b := NewTopicPrefix(t), NewTopicPrefix(t)
	if a == b || !validName.MatchString(a) || len(a) > topicPrefixMaxLen {
		t.Errorf("prefixes %q and %q: want two different valid names", a, b)
	}
}

func TestPostgresVersionPicksItsServer(t *testing.T) {
	t.Setenv("CDCD_PG13_PORT", "")
	t.Setenv("CDCD_PG18_PORT", "6018")
	for _, c := range []struct{ version, addr string }{{"13", "127.0.0.1:55413"}, {"18", "127.0.0.1:6018"}} {
		t.Setenv(PostgresVersionEnv, c.version)
		if got := postgresDSN("db1"); !strings.Contains(got, "@"+c.addr+"/") {
			t.Errorf("%s=%s: postgresDSN = %q, want %s", PostgresVersionEnv, c.version, got, c.addr)
		}
	}
}

// TestMySQLSkipsNamingWhyItIsNotInstalled: where e2e/services.sh could not install MySQL (it writes the
// reason to $CDCD_E2E_DIR/mysql/UNAVAILABLE), a MySQL test skips with that reason, before trying to
// connect, even with the integration tier on.
func TestMySQLSkipsNamingWhyItIsNotInstalled(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CDCD_E2E_DIR", dir)
	t.Setenv(EnableEnv, "1")
	t.Setenv("CDCD_MYSQL_PORT", "1") // nothing answers there: a connection attempt would fail the test
	if err := os.MkdirAll(filepath.Join(dir, "mysql"), 0o755); err != nil {
		t.Fatal(err)
	}
	const reason = "debootstrap of Debian sid with mysql-server-core failed; see x"
	if err := os.WriteFile(filepath.Join(dir, "mysql", "UNAVAILABLE"), []byte(reason+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		MySQL(rec)
	}()
	<-done
	if !rec.skipped || !strings.Contains(rec.message, "MYSQL NOT INSTALLED") || !strings.Contains(rec.message, reason) {
		t.Errorf("skipped=%v failed=%v with %q, want a skip naming %q", rec.skipped, rec.failed, rec.message, reason)
	}
}
