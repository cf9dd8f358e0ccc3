package config

import (
	"bufio"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/props/keytest"
)

// connectWorkerKeys reads testdata/connect-worker-keys.tsv: Kafka Connect 4.4's worker keys with their
// defaults (nil: none or null).
func connectWorkerKeys(t *testing.T) map[string]*string {
	t.Helper()
	f, err := os.Open("testdata/connect-worker-keys.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		name, rest, _ := strings.Cut(sc.Text(), "\t")
		_, def, _ := strings.Cut(rest, "\t")
		if def == "<none>" || def == "<null>" {
			out[name] = nil
		} else {
			out[name] = &def
		}
	}
	return out
}

// isClientSecurityKey reports the Kafka clients' security keys, which Worker.Client carries (see
// clientSecuritySettings) and whose handling is not this accounting's.
func isClientSecurityKey(key string) bool {
	return key == "security.protocol" || strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.")
}

// TestWorkerKeysAccounted fails when a key of Connect's worker is neither read (WorkerKeys), refused,
// accepted for a stated reason, nor a client security key; and when a refused key's default is not
// Connect's.
func TestWorkerKeysAccounted(t *testing.T) {
	declared := map[string]bool{"rest.extension.classes": true} // honoured or refused by workerRefusals
	for _, mode := range []Mode{Standalone, Distributed} {
		for _, k := range WorkerKeys(mode) {
			declared[k.Name] = true
		}
	}
	refused := map[string]configdef.Key{}
	for _, k := range workerRefusedKeys {
		refused[k.Name] = k
	}
	counts := map[string]int{}
	connect := connectWorkerKeys(t)
	for name, def := range connect {
		switch r, isRefused := refused[name]; {
		case isRefused:
			counts["refused"]++
			if (def == nil) != (r.Default == nil) || def != nil && *def != *r.Default {
				t.Errorf("%s: refused with default %v, Connect's is %v", name, r.Default, def)
			}
		case workerAcceptedKeys[name] != "":
			counts["accepted"]++
		case isClientSecurityKey(name):
			counts["security"]++
		case declared[name]:
			counts["honoured"]++
		default:
			t.Errorf("%s is a Connect worker key that cdcd neither reads nor refuses", name)
		}
	}
	for name := range refused {
		if _, ok := connect[name]; !ok {
			t.Errorf("%s is refused, but is not a Connect worker key", name)
		}
	}
	t.Logf("worker: honoured %d, refused %d, accepted without effect %d, client security %d, ignored 0",
		counts["honoured"], counts["refused"], counts["accepted"], counts["security"])
}

// TestWorkerRefusedKeys: a refused worker key away from its default stops the worker with the refusal
// naming it; at its default it passes, and is not reported as unknown.
func TestWorkerRefusedKeys(t *testing.T) {
	for _, k := range workerRefusedKeys {
		cfg := standaloneProps()
		cfg[k.Name] = keytest.NonDefault(k)
		want := (&props.NotImplementedError{Key: k.Name, Default: k.Default}).Error()
		if _, _, err := ParseWorker(cfg, Standalone); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", k.Name, cfg[k.Name], err, want)
		}
		if k.Default != nil {
			cfg[k.Name] = *k.Default
			_, res, err := ParseWorker(cfg, Standalone)
			if err != nil || len(res.Unknown) != 0 {
				t.Errorf("%s at its default: %v, unknown %v", k.Name, err, res.Unknown)
			}
		}
	}
}

func TestWorkerKeyChecks(t *testing.T) {
	cases := []struct {
		set  map[string]string
		want string // "" accepted
	}{
		{map[string]string{"plugin.discovery": "service_load"}, ""},
		{map[string]string{"metrics.context.env": "prod"}, "cdcd does not implement metrics.context.env yet; remove it (it has no default)"},
		{map[string]string{"rest.extension.classes": basicAuthExtension}, ""},
		{map[string]string{"rest.extension.classes": "com.example.Ext"}, "rest.extension.classes: cdcd loads no REST extension; com.example.Ext"},
		{map[string]string{"rest.advertised.listener": "http"}, ""},
		{map[string]string{"rest.advertised.listener": "https"}, "rest.advertised.listener=https"},
		{map[string]string{"listeners": "https://:8443", "rest.advertised.listener": "HTTPS"}, ""},
	}
	for _, c := range cases {
		cfg := standaloneProps()
		maps.Copy(cfg, c.set)
		_, _, err := ParseWorker(cfg, Standalone)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
}
