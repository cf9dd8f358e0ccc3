package avro

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SubjectNameStrategy is how a record's subject is named (key.subject.name.strategy,
// value.subject.name.strategy).
type SubjectNameStrategy uint8

const (
	// TopicName is <topic>-key or <topic>-value (the default).
	TopicName SubjectNameStrategy = iota
	// RecordName is the full name of the record schema; the schema must be a record.
	RecordName
	// TopicRecordName is <topic>-<record full name>; the schema must be a record.
	TopicRecordName
)

// Confluent's class names for the strategies, as users write them in converter settings.
var strategyClasses = map[string]SubjectNameStrategy{
	"io.confluent.kafka.serializers.subject.TopicNameStrategy":       TopicName,
	"io.confluent.kafka.serializers.subject.RecordNameStrategy":      RecordName,
	"io.confluent.kafka.serializers.subject.TopicRecordNameStrategy": TopicRecordName,
}

// Config is one AvroConverter's settings: the key.converter.* or value.converter.* keys, prefix removed.
type Config struct {
	// IsKey is true for key.converter: it picks the -key subject suffix and key.subject.name.strategy.
	IsKey bool
	// URLs are schema.registry.url, split at commas; a request that cannot reach one tries the next.
	// They carry no user info: FromConfig moves it to Credentials.
	URLs []string
	// Credentials maps a URL's host to the basic-auth user info sent to it
	// (basic.auth.credentials.source=URL, the default, takes it from the URL itself).
	Credentials map[string]*url.Userinfo
	// UserInfo is basic.auth.user.info, sent to every URL (basic.auth.credentials.source=USER_INFO).
	UserInfo *url.Userinfo
	// Bearer is bearer.auth.credentials.source (STATIC_TOKEN or OAUTHBEARER) and its settings; nil
	// without it. It excludes basic auth: FromConfig refuses both.
	Bearer *Bearer
	// TLS is the client TLS of the https URLs, from the schema.registry.ssl.* keys; nil when none is set
	// (Go's defaults: the system's roots, the host name verified).
	TLS *tls.Config
	// AutoRegister is auto.register.schemas (default true): register each new schema before its first
	// record. Otherwise the schema must already be registered (or, with UseLatestVersion, the subject's
	// latest version is used).
	AutoRegister bool
	// UseLatestVersion is use.latest.version (default false); it applies only without AutoRegister.
	UseLatestVersion bool
	// Normalize is normalize.schemas (default false): the registry normalises schemas before comparing.
	Normalize bool
	// Strategy is the subject name strategy for this converter's side (key or value).
	Strategy SubjectNameStrategy
	// ConnectMetaData is connect.meta.data (default true): write connect.* properties into schemas.
	ConnectMetaData bool
	// IgnoreDefaultForNullables is ignore.default.for.nullables (default false): write a null optional
	// field as null instead of its schema default.
	IgnoreDefaultForNullables bool
	// MaxRetries, RetryWait and RetryMaxWait bound the retries of a registry request that could not be
	// delivered or got a transient status (max.retries 3, retries.wait.ms 1000, retries.max.wait.ms
	// 20000): waits double from RetryWait up to RetryMaxWait.
	MaxRetries   int
	RetryWait    time.Duration
	RetryMaxWait time.Duration
}

// Converter settings read by FromConfig, with Confluent's names.
const (
	ConfigURL                   = "schema.registry.url"
	ConfigCredentialsSource     = "basic.auth.credentials.source"
	ConfigUserInfo              = "basic.auth.user.info"
	ConfigLegacyUserInfo        = "schema.registry.basic.auth.user.info"
	ConfigAutoRegister          = "auto.register.schemas"
	ConfigUseLatestVersion      = "use.latest.version"
	ConfigNormalize             = "normalize.schemas"
	ConfigKeyStrategy           = "key.subject.name.strategy"
	ConfigValueStrategy         = "value.subject.name.strategy"
	ConfigConnectMetaData       = "connect.meta.data"
	ConfigIgnoreDefaultNullable = "ignore.default.for.nullables"
	ConfigMaxRetries            = "max.retries"
	ConfigRetriesWait           = "retries.wait.ms"
	ConfigRetriesMaxWait        = "retries.max.wait.ms"
)

// unsupportedWhenTrue are AvroData options that change the schemas or values cdcd writes; cdcd implements
// only their default (false), so turning one on is refused rather than silently ignored.
var unsupportedWhenTrue = []string{
	"enhanced.avro.schema.support", "scrub.invalid.names", "generalized.sum.type.support",
	"allow.optional.map.keys", "discard.type.doc.default",
}

// FromConfig parses converter settings (without the key.converter. or value.converter. prefix). Missing
// keys keep Confluent's defaults; keys the converter does not know are ignored, as Confluent ignores
// them, except under schema.registry.ssl., where every key is honoured or refused (see security.go). Booleans and numbers are parsed as Kafka's ConfigDef parses them: case-insensitive, trimmed.
func FromConfig(isKey bool, settings map[string]string) (Config, error) {
	c := Config{
		IsKey: isKey, AutoRegister: true, ConnectMetaData: true,
		MaxRetries: 3, RetryWait: time.Second, RetryMaxWait: 20 * time.Second,
	}
	if err := c.parseURLs(settings); err != nil {
		return Config{}, err
	}
	bools := []struct {
		key string
		dst *bool
	}{
		{ConfigAutoRegister, &c.AutoRegister},
		{ConfigUseLatestVersion, &c.UseLatestVersion},
		{ConfigNormalize, &c.Normalize},
		{ConfigConnectMetaData, &c.ConnectMetaData},
		{ConfigIgnoreDefaultNullable, &c.IgnoreDefaultForNullables},
	}
	for _, b := range bools {
		if v, ok := settings[b.key]; ok {
			parsed, err := parseBool(b.key, v)
			if err != nil {
				return Config{}, err
			}
			*b.dst = parsed
		}
	}
	for _, key := range unsupportedWhenTrue {
		if v, ok := settings[key]; ok {
			on, err := parseBool(key, v)
			if err != nil {
				return Config{}, err
			}
			if on {
				return Config{}, fmt.Errorf("%w: %s=%s is not supported by cdcd (only false)", ErrConfig, key, v)
			}
		}
	}
	// Both strategies are validated, as Confluent validates both class names, but only this side's is used.
	for _, key := range []string{ConfigKeyStrategy, ConfigValueStrategy} {
		v, ok := settings[key]
		if !ok {
			continue
		}
		s, known := strategyClasses[strings.TrimSpace(v)]
		if !known {
			return Config{}, fmt.Errorf("%w: %s=%q (want io.confluent.kafka.serializers.subject.TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy)", ErrConfig, key, v)
		}
		if (key == ConfigKeyStrategy) == isKey {
			c.Strategy = s
		}
	}
	if n, ok, err := parseCount(settings, ConfigMaxRetries); err != nil {
		return Config{}, err
	} else if ok {
		c.MaxRetries = n
	}
	for key, dst := range map[string]*time.Duration{ConfigRetriesWait: &c.RetryWait, ConfigRetriesMaxWait: &c.RetryMaxWait} {
		if n, ok, err := parseCount(settings, key); err != nil {
			return Config{}, err
		} else if ok {
			*dst = time.Duration(n) * time.Millisecond
		}
	}
	if err := c.parseCredentials(settings); err != nil {
		return Config{}, err
	}
	if err := c.parseSecurity(settings); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parseURLs reads schema.registry.url and moves each URL's user info into Credentials, so that no
// password appears in a URL that an error message or a log line names.
func (c *Config) parseURLs(settings map[string]string) error {
	raw := strings.TrimSpace(settings[ConfigURL])
	if raw == "" {
		return fmt.Errorf("%w: missing required setting %s", ErrConfig, ConfigURL)
	}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "://") {
			part = "http://" + part
		}
		u, err := url.Parse(part)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%w: %s=%q: %q is not an http(s) URL", ErrConfig, ConfigURL, hideUserInfo(raw), hideUserInfo(part))
		}
		if u.User != nil {
			if c.Credentials == nil {
				c.Credentials = map[string]*url.Userinfo{}
			}
			c.Credentials[u.Host] = u.User
			u.User = nil
		}
		c.URLs = append(c.URLs, u.String())
	}
	if len(c.URLs) == 0 {
		return fmt.Errorf("%w: %s=%q names no URL", ErrConfig, ConfigURL, hideUserInfo(raw))
	}
	return nil
}

// userInfo is the user:password part of URLs, also of URLs too malformed for url.Parse.
var userInfo = regexp.MustCompile(`://[^/@]*@`)

// hideUserInfo replaces the credentials of every URL in s, so an error about a URL never carries them.
func hideUserInfo(s string) string { return userInfo.ReplaceAllString(s, "://[hidden]@") }

// parseCredentials applies basic.auth.credentials.source: URL keeps the user info of each URL, USER_INFO
// sends basic.auth.user.info everywhere instead.
func (c *Config) parseCredentials(settings map[string]string) error {
	source := "URL"
	if v, ok := settings[ConfigCredentialsSource]; ok {
		source = strings.ToUpper(strings.TrimSpace(v))
	}
	switch source {
	case "URL":
		return nil
	case "USER_INFO":
		info := settings[ConfigUserInfo]
		if info == "" {
			info = settings[ConfigLegacyUserInfo]
		}
		user, pass, ok := strings.Cut(info, ":")
		if !ok || user == "" {
			return fmt.Errorf("%w: %s=USER_INFO needs %s=<user>:<password>", ErrConfig, ConfigCredentialsSource, ConfigUserInfo)
		}
		c.UserInfo, c.Credentials = url.UserPassword(user, pass), nil
		return nil
	}
	return fmt.Errorf("%w: %s=%q (want URL or USER_INFO)", ErrConfig, ConfigCredentialsSource, settings[ConfigCredentialsSource])
}

// parseCount reads a non-negative integer setting; ok is false when it is absent.
func parseCount(settings map[string]string, key string) (n int, ok bool, err error) {
	v, ok := settings[key]
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("%w: %s=%q (want a non-negative integer)", ErrConfig, key, v)
	}
	return n, true, nil
}

func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s=%q (want true or false)", ErrConfig, key, v)
}
