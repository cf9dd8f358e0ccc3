package slotguard

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConfigPrefix starts every worker property of the guardian. The worker should treat the prefix as known
// and hand the whole worker config to ParseConfig, which rejects misspelt keys under it.
const ConfigPrefix = "cdcd.slots."

// Orphan policies.
const (
	PolicyNone = "none" // orphaned slots are only reported and alerted
	PolicyDrop = "drop" // orphaned slots are dropped after the grace period
)

// Config is the guardian's configuration. A zero threshold disables its alert.
type Config struct {
	Enabled bool
	// RefreshInterval is how often every server's slots are read.
	RefreshInterval time.Duration
	// Servers are extra connection strings to watch besides the servers of the connectors, so that a server
	// whose last connector was deleted is still watched after a restart.
	Servers []string

	RetainedBytes   int64         // alert when a slot retains at least this much WAL
	Inactive        time.Duration // alert when a slot has been inactive at least this long
	GrowthPerSecond float64       // alert when retained WAL grows at least this fast (bytes/s)
	TimeToFull      time.Duration // alert when a limit is estimated to be reached within this time
	// WALCapacity is the WAL a slot may retain before the server is in trouble (typically the free space of
	// the volume holding pg_wal); 0 means unknown, and only safe_wal_size bounds the estimate.
	WALCapacity int64

	WebhookURL string

	OrphanPolicy string        // PolicyNone or PolicyDrop
	OrphanGrace  time.Duration // how long a slot must stay orphaned and inactive before the policy drops it
	DryRun       bool          // the policy reports what it would drop and drops nothing

	// StorageTopic is the compacted topic a distributed cluster keeps its ledger in; "" takes
	// "<group.id>-cdcd-slots". A standalone worker keeps its ledger in a file and refuses the key.
	StorageTopic string
}

// configKey describes one worker property: its default and how it is parsed into a Config.
type configKey struct {
	name, def, doc string
	set            func(c *Config, v string) error
}

// configKeys documents every property; README and `cdcd slots` users read the same text.
var configKeys = []configKey{
	{"enable", "true", "Watch the replication slots of every PostgreSQL server a connector uses.", func(c *Config, v string) (err error) {
		c.Enabled, err = parseBool(v)
		return err
	}},
	{"refresh.interval.ms", "30000", "How often slots are read, in milliseconds.", func(c *Config, v string) (err error) {
		c.RefreshInterval, err = parseMillis(v, false)
		return err
	}},
	{"servers", "", "Comma-separated connection strings (postgres://…) of servers to watch besides the connectors' servers.", func(c *Config, v string) error {
		c.Servers = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if _, err := pgx.ParseConfig(s); err != nil || !strings.HasPrefix(s, "postgres") {
				// pgx's error may quote the connection string, password included, so it is not passed on.
				return fmt.Errorf("%s is not a postgres:// connection string", redactDSN(s))
			}
			c.Servers = append(c.Servers, s)
		}
		return nil
	}},
	{"alert.retained.bytes", "1073741824", "Alert when a slot retains at least this many bytes of WAL; 0 disables.", func(c *Config, v string) (err error) {
		c.RetainedBytes, err = parseBytes(v)
		return err
	}},
	{"alert.inactive.ms", "600000", "Alert when a slot has been inactive this long, in milliseconds; 0 disables.", func(c *Config, v string) (err error) {
		c.Inactive, err = parseMillis(v, true)
		return err
	}},
	{"alert.growth.bytes.per.second", "0", "Alert when a slot's retained WAL grows at least this fast; 0 disables.", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0) || math.IsInf(f, 0) { // !(f >= 0) also catches NaN
			return fmt.Errorf("want a number of bytes per second, 0 or more")
		}
		c.GrowthPerSecond = f
		return nil
	}},
	{"alert.time.to.full.ms", "3600000", "Alert when safe_wal_size or the WAL capacity is estimated to run out within this many milliseconds; 0 disables.", func(c *Config, v string) (err error) {
		c.TimeToFull, err = parseMillis(v, true)
		return err
	}},
	{"wal.capacity.bytes", "0", "WAL a slot may retain before the server is in trouble (e.g. free space for pg_wal); 0 means unknown.", func(c *Config, v string) (err error) {
		c.WALCapacity, err = parseBytes(v)
		return err
	}},
	{"webhook.url", "", "URL that receives a JSON POST when an alert starts or clears and when a slot is dropped.", func(c *Config, v string) error {
		if v == "" {
			c.WebhookURL = ""
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an http:// or https:// URL")
		}
		c.WebhookURL = v
		return nil
	}},
	{"orphan.policy", PolicyNone, "What to do with orphaned slots: none (report them) or drop (after the grace period).", func(c *Config, v string) error {
		if v != PolicyNone && v != PolicyDrop {
			return fmt.Errorf("want %s or %s", PolicyNone, PolicyDrop)
		}
		c.OrphanPolicy = v
		return nil
	}},
	{"orphan.grace.ms", "900000", "How long a slot must stay orphaned and inactive before the drop policy drops it, in milliseconds; keep it well above a worker failover.", func(c *Config, v string) (err error) {
		c.OrphanGrace, err = parseMillis(v, true)
		return err
	}},
	{"storage.topic", "", "Distributed mode: the compacted topic (one partition, config.storage.replication.factor) that keeps the cluster's record of the slots cdcd created; empty takes <group.id>-cdcd-slots. Standalone mode keeps it beside offset.storage.file and refuses this key.", func(c *Config, v string) error {
		c.StorageTopic = v
		return nil
	}},
	{"orphan.dry.run", "false", "With orphan.policy=drop, log and report the drops without dropping anything.", func(c *Config, v string) (err error) {
		c.DryRun, err = parseBool(v)
		return err
	}},
}

// ParseConfig reads the guardian's properties (those starting with ConfigPrefix) from a worker config;
// other keys are ignored. Every problem is reported, each naming its key and value.
func ParseConfig(props map[string]string) (Config, error) {
	var cfg Config
	for _, k := range configKeys {
		if err := k.set(&cfg, k.def); err != nil {
			return Config{}, fmt.Errorf("default of %s%s: %w", ConfigPrefix, k.name, err)
		}
	}
	var problems []string
	for key, value := range props {
		name, ok := strings.CutPrefix(key, ConfigPrefix)
		if !ok {
			continue
		}
		i := slices.IndexFunc(configKeys, func(k configKey) bool { return k.name == name })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("unknown worker property %s (known: %s)", key, knownKeys()))
			continue
		}
		if err := configKeys[i].set(&cfg, strings.TrimSpace(value)); err != nil {
			shown := value
			if name == "servers" {
				shown = redactDSN(value)
			}
			problems = append(problems, (&ConfigError{Key: key, Value: shown, Reason: err.Error()}).Error())
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems) // map order would make the message change from run to run
		return Config{}, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return cfg, nil
}

func knownKeys() string {
	names := make([]string, len(configKeys))
	for i, k := range configKeys {
		names[i] = ConfigPrefix + k.name
	}
	return strings.Join(names, ", ")
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false")
}

func parseMillis(v string, zeroOK bool) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || (n == 0 && !zeroOK) || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
		if zeroOK {
			return 0, fmt.Errorf("want a whole number of milliseconds, 0 or more")
		}
		return 0, fmt.Errorf("want a whole number of milliseconds, more than 0")
	}
	return time.Duration(n) * time.Millisecond, nil
}

func parseBytes(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a whole number of bytes, 0 or more")
	}
	return n, nil
}

// redactDSN hides passwords so that a connection string can be shown in an error or a log.
func redactDSN(dsn string) string {
	var out []string
	for _, s := range strings.Split(dsn, ",") {
		if u, err := url.Parse(strings.TrimSpace(s)); err == nil {
			s = u.Redacted()
		} else {
			s = "(unparsable connection string)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}
