package config

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolvePlaceholders(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("pw = s3cret\nuser=dbz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := map[string]string{
		"config.providers":                             "env,file,dir,nameless",
		"config.providers.env.class":                   EnvVarProviderClass,
		"config.providers.env.param.allowlist.pattern": "PG_.*",
		"config.providers.file.class":                  FileProviderClass,
		"config.providers.dir.class":                   DirectoryProviderClass,
		"config.providers.dir.param.allowed.paths":     dir,
	}
	ps, err := NewProviders(worker, []string{"PG_HOST=db1", "HOME=/root"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{
		"host":     "${env:PG_HOST}",
		"home":     "${env:HOME}", // not allowed: left as is
		"password": "${file:" + secrets + ":pw}",
		"url":      "u=${file:" + secrets + ":user}&p=${file:" + secrets + ":nope}",
		"token":    "${dir:" + dir + ":token}",
		"outside":  "${dir:/etc:hostname}", // outside allowed.paths
		"unknown":  "${vault:a:b}",         // unknown provider
		"nameless": "${nameless:x}",        // listed without a class
		"plain":    "no placeholders",
	}
	res, err := ps.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"host": "db1", "home": "${env:HOME}", "password": "s3cret",
		"url": "u=dbz&p=${file:" + secrets + ":nope}", "token": "tok\n",
		"outside": "${dir:/etc:hostname}", "unknown": "${vault:a:b}", "nameless": "${nameless:x}", "plain": "no placeholders",
	}
	if !maps.Equal(res.Values, want) {
		t.Errorf("got %q\nwant %q", res.Values, want)
	}
}

func TestProviderErrors(t *testing.T) {
	env := Providers{"env": &EnvProvider{vars: map[string]string{}}}
	if _, err := env.Resolve(map[string]string{"a": "${env:/path:KEY}"}); !errors.Is(err, ErrProvider) {
		t.Errorf("env path accepted: %v", err)
	}
	file := Providers{"file": &FileProvider{}}
	if _, err := file.Resolve(map[string]string{"a": "${file:/does/not/exist:k}"}); !errors.Is(err, ErrProvider) {
		t.Errorf("missing file accepted: %v", err)
	}
	for _, allowed := range []string{"relative/path", "/does/not/exist"} {
		if _, err := NewProviders(map[string]string{"config.providers": "f", "config.providers.f.class": FileProviderClass,
			"config.providers.f.param.allowed.paths": allowed}, nil); err == nil {
			t.Errorf("allowed.paths=%s accepted", allowed)
		}
	}
	if _, err := NewProviders(map[string]string{"config.providers": "v", "config.providers.v.class": "com.example.Vault"}, nil); err == nil {
		t.Error("unknown provider class accepted")
	}
	// Anchored, "a)|(b" compiles ("^(?:a)|(b)$") and matches every name starting with a; Java refuses it.
	if _, err := NewProviders(map[string]string{"config.providers": "env", "config.providers.env.class": EnvVarProviderClass,
		"config.providers.env.param.allowlist.pattern": "a)|(b"}, []string{"aws_SECRET=x"}); !errors.Is(err, ErrProvider) {
		t.Errorf("allowlist.pattern a)|(b: error %v, want ErrProvider", err)
	}
}

func TestPlaceholderGroups(t *testing.T) {
	// The same groups Java's regex yields: provider, optional path, key
	// (the key may contain ':').
	cases := map[string][3]string{
		"${env:HOME}":       {"env", "", "HOME"},
		"${file:/a/b:key}":  {"file", "/a/b", "key"},
		"${a:b:c:d}":        {"a", "b", "c:d"},
		"${a:b:}":           {"a", "b", ""},
		"x${file:C:\\x:k}y": {"file", "C", "\\x:k"},
	}
	for in, want := range cases {
		m := placeholder.FindStringSubmatch(in)
		if m == nil || [3]string{m[1], m[3], m[4]} != want {
			t.Errorf("%s: got %q, want %q", in, m, want)
		}
	}
}

// A placeholder naming a device or an oversized file is refused at once, naming the path: neither may block
// the resolution (a REST request) or grow the process (source/regularfile covers FIFOs and the rest).
func TestFileProvidersReadBoundedRegularFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("k=v\n"), MaxProviderFileSize/4+1), 0o600); err != nil {
		t.Fatal(err)
	}
	atLimit := filepath.Join(dir, "limit")
	if err := os.WriteFile(atLimit, append([]byte("k=v\n#"), bytes.Repeat([]byte("x"), MaxProviderFileSize-5)...), 0o600); err != nil {
		t.Fatal(err)
	}
	ps := Providers{"file": &FileProvider{}, "dir": &DirectoryProvider{}}
	for _, tc := range []struct{ placeholder, want string }{
		{"${file:/dev/zero:k}", "Could not read properties from file /dev/zero: not a regular file"},
		{"${file:" + big + ":k}", "larger than 1048576 bytes"},
		{"${dir:" + dir + ":big}", "larger than 1048576 bytes"},
	} {
		_, err := ps.Resolve(map[string]string{"a": tc.placeholder})
		if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.placeholder, err, tc.want)
		}
	}
	// The directory provider skips what is not a regular file, as Kafka's does; a file at the limit is read.
	res, err := ps.Resolve(map[string]string{"zero": "${dir:/dev:zero}", "limit": "${file:" + atLimit + ":k}"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"zero": "${dir:/dev:zero}", "limit": "v"}; !maps.Equal(res.Values, want) {
		t.Errorf("got %q, want %q", res.Values, want)
	}
}

// Unrestricted names the providers the worker warns about at start: those reading whatever the process can.
func TestUnrestrictedProviders(t *testing.T) {
	dir := t.TempDir()
	ps, err := NewProviders(map[string]string{
		"config.providers":                                 "file,dir,env,safefile,safedir,safeenv",
		"config.providers.file.class":                      FileProviderClass,
		"config.providers.dir.class":                       DirectoryProviderClass,
		"config.providers.env.class":                       EnvVarProviderClass,
		"config.providers.safefile.class":                  FileProviderClass,
		"config.providers.safefile.param.allowed.paths":    dir,
		"config.providers.safedir.class":                   DirectoryProviderClass,
		"config.providers.safedir.param.allowed.paths":     dir,
		"config.providers.safeenv.class":                   EnvVarProviderClass,
		"config.providers.safeenv.param.allowlist.pattern": "PG_.*",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps.Unrestricted(), []string{"dir", "env", "file"}; !slices.Equal(got, want) {
		t.Errorf("Unrestricted() = %q, want %q", got, want)
	}
}
