package avro

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFromConfigDefaults(t *testing.T) {
	c, err := FromConfig(true, map[string]string{"schema.registry.url": "http://a:8081, b:8081 ,https://u:p@c"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		IsKey: true, URLs: []string{"http://a:8081", "http://b:8081", "https://c"},
		Credentials:  map[string]*url.Userinfo{"c": url.UserPassword("u", "p")},
		AutoRegister: true, ConnectMetaData: true, Strategy: TopicName,
		MaxRetries: 3, RetryWait: time.Second, RetryMaxWait: 20 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestFromConfigSettings(t *testing.T) {
	c, err := FromConfig(false, map[string]string{
		"schema.registry.url":           "http://u:p@a:8081",
		"basic.auth.credentials.source": "user_info",
		"basic.auth.user.info":          "alice:pa:ss",
		"auto.register.schemas":         " FALSE",
		"use.latest.version":            "true",
		"key.subject.name.strategy":     "io.confluent.kafka.serializers.subject.RecordNameStrategy",
		"value.subject.name.strategy":   "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
		"connect.meta.data":             "false",
		"max.retries":                   "0",
		"retries.wait.ms":               "5",
		"enhanced.avro.schema.support":  "false",
		"some.other.setting":            "ignored",
	})
	if err != nil {
		t.Fatal(err)
	}
	if pass, _ := c.UserInfo.Password(); c.UserInfo.Username() != "alice" || pass != "pa:ss" || c.Credentials != nil {
		t.Errorf("USER_INFO must replace the URL's credentials: %v %v", c.UserInfo, c.Credentials)
	}
	if c.AutoRegister || !c.UseLatestVersion || c.ConnectMetaData || c.Strategy != TopicRecordName ||
		c.MaxRetries != 0 || c.RetryWait != 5*time.Millisecond || c.URLs[0] != "http://a:8081" {
		t.Errorf("settings not applied: %+v", c)
	}
}

func TestFromConfigRefusesBadValues(t *testing.T) {
	cases := map[string]map[string]string{
		"schema.registry.url":           {},
		"ftp://":                        {"schema.registry.url": "ftp://a"},
		"auto.register.schemas":         {"auto.register.schemas": "yes"},
		"use.latest.version":            {"use.latest.version": "1"},
		"value.subject.name.strategy":   {"value.subject.name.strategy": "TopicNameStrategy"},
		"key.subject.name.strategy":     {"key.subject.name.strategy": "com.example.Mine"},
		"basic.auth.credentials.source": {"basic.auth.credentials.source": "SASL_INHERIT"},
		"basic.auth.user.info":          {"basic.auth.credentials.source": "USER_INFO"},
		"max.retries":                   {"max.retries": "-1"},
		"scrub.invalid.names":           {"scrub.invalid.names": "true"},
	}
	for want, settings := range cases {
		if _, ok := settings["schema.registry.url"]; !ok && want != "schema.registry.url" {
			settings["schema.registry.url"] = "http://a:8081"
		}
		_, err := FromConfig(false, settings)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want ErrConfig naming %s", settings, err, want)
		}
	}
}

// A registry URL's user:password never appears in an error about the URL.
func TestURLErrorsHideUserInfo(t *testing.T) {
	for _, raw := range []string{"ftp://alice:pa55word@registry:8081", "http://alice:pa55word@registry:8081,http://bob:pa55word@%zz"} {
		_, err := FromConfig(false, map[string]string{ConfigURL: raw})
		if err == nil || strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "alice") {
			t.Errorf("%s: got %v, want an error without the credentials", raw, err)
		}
	}
}
