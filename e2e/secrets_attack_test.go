package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// seededSecret has what parsers trim, split, quote or escape: quotes, spaces, list and map separators
// (; , = :), a backslash and, as `echo pw > f` writes a secret file, a trailing newline.
const seededSecret = "Qx7\"Zk; Wv,Jq=Pf:Hy\\Bn Rt\n"

// secretPieces returns every piece of four bytes or more of secret that text carries: as written, as JSON
// escapes it, in the strings of text read as JSON, and in those strings with Go's and Java's quoting
// (\" and \\) undone.
func secretPieces(text, secret string) []string {
	texts := []string{text}
	var doc any
	if json.Unmarshal([]byte(text), &doc) == nil {
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				texts = append(texts, x, strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(x))
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					walk(k)
					walk(e)
				}
			}
		}
		walk(doc)
	}
	var found []string
	for i := 0; i+4 <= len(secret); i++ {
		piece := secret[i : i+4]
		escaped, _ := json.Marshal(piece)
		if slices.ContainsFunc(texts, func(t string) bool {
			return strings.Contains(t, piece) || strings.Contains(t, string(escaped[1:len(escaped)-1]))
		}) {
			found = append(found, piece)
		}
	}
	return found
}

// providerWorker adds file, directory and env config providers to worker props.
func providerWorker(props map[string]string, params map[string]string) map[string]string {
	props["config.providers"] = "file,dir,env"
	props["config.providers.file.class"] = "org.apache.kafka.common.config.provider.FileConfigProvider"
	props["config.providers.dir.class"] = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	props["config.providers.env.class"] = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	for k, v := range params {
		props["config.providers."+k] = v
	}
	return props
}

// writeSecretFiles writes secret as the password of dir/db.properties (a properties line keeps no
// trailing newline) and as the whole of dir/pw.
func writeSecretFiles(t *testing.T, dir, secret string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	escaped := strings.NewReplacer(`\`, `\\`, "\n", "").Replace(secret)
	if err := os.WriteFile(filepath.Join(dir, "db.properties"), []byte("password="+escaped+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The attack: a secret read through ${file:…}, ${directory:…} and ${env:…}, used as a password and
// in keys whose parsers quote what they refuse, is asked for through validation, creation, the status of
// tasks that fail on it, the health check and the task configs. No piece of it may come back in any
// answer or in the process's log. The worker has no Kafka (bootstrap.servers=127.0.0.1:1); its
// connectors' tasks fail on the database's refusal of the password or on Kafka, and those traces count.
func TestSecretsNeverLeaveTheProcess(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	dir := t.TempDir()
	secretsDir := filepath.Join(dir, "secrets")
	writeSecretFiles(t, secretsDir, seededSecret)
	t.Setenv("CDCD_E2E_SEEDED_SECRET", seededSecret)
	fileRef := "${file:" + filepath.Join(secretsDir, "db.properties") + ":password}"
	dirRef := "${dir:" + secretsDir + ":pw}"
	envRef := "${env:CDCD_E2E_SEEDED_SECRET}"

	worker := providerWorker(workerProps([]string{"127.0.0.1:1"}, filepath.Join(dir, "offsets.dat")), nil)
	worker["cdcd.slots.refresh.interval.ms"] = "500"
	fromFile := pgConnector(t, dsn, "leak-file", "leakfile", "")
	fromFile["database.password"] = fileRef
	// The database's refusal of an unknown database quotes its name: a text cdcd does not word.
	fromFile["database.dbname"] = fileRef
	fromDir := pgConnector(t, dsn, "leak-dir", "leakdir", "")
	fromDir["database.password"] = dirRef
	fromDir["database.dbname"] = dirRef
	p := startStandalone(t, dir, worker, fromFile, fromDir)
	api := p.restAPI()

	type answer struct{ request, body string }
	var answers []answer
	ask := func(method, path, body string) restReply {
		t.Helper()
		r := api.do(method, path, body)
		answers = append(answers, answer{method + " " + path, r.body})
		return r
	}

	// Validation and creation of a config that uses the secret where parsers quote what they refuse.
	refused := pgConnector(t, dsn, "leak-rest", "leakrest", "")
	refused["database.password"] = envRef
	refused["message.key.columns"] = fileRef + ";x"
	refused["slot.name"] = dirRef
	refused["heartbeat.action.query"] = envRef
	refused["heartbeat.interval.ms"] = "0"
	refused["column.mask.hash.SHA-256.with.salt.pepper"] = dirRef + ";" + fileRef
	if r := ask("PUT", "/connector-plugins/PostgresConnector/config/validate", jsonBody(t, refused)); r.status != 200 ||
		!strings.Contains(r.body, "Invalid value "+jsonString(t, fileRef+";x")+" for configuration message.key.columns") {
		t.Errorf("validate: %d %s, want message.key.columns refused by its reference", r.status, r.body)
	}
	if r := ask("POST", "/connectors", jsonBody(t, map[string]any{"name": "leak-rest", "config": refused})); r.status != 400 {
		t.Errorf("create: %d %s, want 400", r.status, r.body)
	}
	// A config whose only fault is the password: the database refuses it while creation checks the connection.
	wrongPassword := pgConnector(t, dsn, "leak-env", "leakenv", "")
	wrongPassword["database.password"] = envRef
	ask("POST", "/connectors", jsonBody(t, map[string]any{"name": "leak-env", "config": wrongPassword}))

	// The tasks of the connector files run with the secret as their password until they fail or retry.
	for _, name := range []string{"leak-file", "leak-dir"} {
		waitForTrace(t, api, name)
		ask("GET", "/connectors/"+name+"/status", "")
		ask("GET", "/connectors/"+name+"/tasks/0/status", "")
		ask("GET", "/connectors/"+name+"/tasks", "")
		ask("GET", "/connectors/"+name+"/config", "")
		ask("POST", "/connectors/"+name+"/restart?includeTasks=true", "")
	}
	ask("GET", "/connectors?expand=status&expand=info", "")
	ask("GET", "/health", "")
	// The slot guardian reads the connectors' servers with their resolved configs; the database's refusal
	// quotes the database name.
	waitLog(t, p, "cannot read the replication slots of a server")
	ask("GET", "/slots", "")
	ask("GET", "/connectors/leak-file/slot", "")

	for _, a := range answers {
		if leaked := secretPieces(a.body, seededSecret); len(leaked) > 0 {
			t.Errorf("pieces %q of the secret in the answer to %s: %s", leaked, a.request, a.body)
		}
	}
	if leaked := secretPieces(p.log.String(), seededSecret); len(leaked) > 0 {
		t.Errorf("pieces %q of the secret in cdcd's log", leaked)
	}
}

// waitForTrace waits until the task of connector name reports a trace (a failure, or a retry's cause).
func waitForTrace(t *testing.T, api restClient, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var st struct {
			Tasks []struct{ State, Trace string }
		}
		_ = json.Unmarshal([]byte(api.do("GET", "/connectors/"+name+"/status", "").body), &st)
		if len(st.Tasks) == 1 && st.Tasks[0].Trace != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task of %s reported no trace: %+v", name, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jsonString is s as it appears inside a JSON string.
func jsonString(t *testing.T, s string) string {
	b := jsonBody(t, s)
	return b[1 : len(b)-1]
}

// allowed.paths and allowlist.pattern confine what a REST client can have resolved: a reference outside
// them stays as written (Connect's behaviour), so neither the file's content nor the variable's reaches the
// answer, and the worker logs which path it refused.
func TestProvidersResolveOnlyAllowedPathsAndVariables(t *testing.T) {
	dir := t.TempDir()
	allowed, outside := filepath.Join(dir, "allowed"), filepath.Join(dir, "outside")
	writeSecretFiles(t, allowed, "allowed-value")
	writeSecretFiles(t, outside, seededSecret)
	t.Setenv("CDCD_E2E_SEEDED_SECRET", seededSecret)
	t.Setenv("CDCD_E2E_ALLOWED_VAR", "allowed-value")

	worker := providerWorker(workerProps([]string{"127.0.0.1:1"}, filepath.Join(dir, "offsets.dat")), map[string]string{
		"file.param.allowed.paths":    allowed,
		"dir.param.allowed.paths":     allowed,
		"env.param.allowlist.pattern": "CDCD_E2E_ALLOWED_.*",
	})
	p := startStandalone(t, dir, worker)
	api := p.restAPI()

	cfg := pgConnector(t, "postgres://u@127.0.0.1:1/d", "confined", "confined", "")
	refs := map[string]string{
		"message.key.columns":                       "${file:" + filepath.Join(outside, "db.properties") + ":password}",
		"slot.name":                                 "${dir:" + outside + ":pw}",
		"heartbeat.action.query":                    "${env:CDCD_E2E_SEEDED_SECRET}",
		"column.mask.hash.SHA-256.with.salt.pepper": "${file:" + filepath.Join(outside, "..", "outside", "db.properties") + ":password}",
	}
	for k, v := range refs {
		cfg[k] = v
	}
	cfg["heartbeat.interval.ms"] = "0"
	cfg["database.password"] = "${file:" + filepath.Join(allowed, "db.properties") + ":password}"
	cfg["topic.prefix"] = "${env:CDCD_E2E_ALLOWED_VAR}"
	r := api.do("PUT", "/connector-plugins/PostgresConnector/config/validate", jsonBody(t, cfg))
	if leaked := secretPieces(r.body, seededSecret); len(leaked) > 0 {
		t.Errorf("pieces %q of a file outside allowed.paths or a variable outside allowlist.pattern in %s", leaked, r.body)
	}
	// Unresolved, the references are ordinary values: refused as written, not as a provider's secret.
	if want := "Invalid value ${dir:" + outside + ":pw} for configuration slot.name: a slot name may contain only"; !strings.Contains(r.body, want) {
		t.Errorf("slot.name: want its reference refused as written (%s), got %s", want, r.body)
	}
	if strings.Contains(r.body, "the value the config provider resolved") {
		t.Errorf("a reference outside the allowed paths or variables was resolved: %s", r.body)
	}
	if !strings.Contains(p.log.String(), "config provider path is not allowed") || !strings.Contains(p.log.String(), outside) {
		t.Errorf("the worker did not log the refused path:\n%s", p.log.String())
	}
	if strings.Contains(p.log.String(), "config providers without a restriction") {
		t.Errorf("restricted providers were warned about as unrestricted:\n%s", p.log.String())
	}
}
