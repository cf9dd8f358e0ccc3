package rest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const extensionClasses = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"

// writeJAAS writes a JAAS login configuration and returns its path.
func writeJAAS(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "connect_jaas.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConnectsBasicAuthExtensionIsHonoured: a worker file written for Connect (rest.extension.classes naming
// BasicAuthSecurityRestExtension, KAFKA_OPTS naming the JAAS file) turns basic authentication on with the
// credentials file of the KafkaConnect entry's PropertyFileLoginModule; before, cdcd refused to start.
func TestConnectsBasicAuthExtensionIsHonoured(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.properties")
	if err := os.WriteFile(creds, []byte("admin: s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jaas := writeJAAS(t, dir, `/* Connect's REST users */
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="y";
};
// the one Connect reads
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
    file="`+creds+`";
};
`)
	props := map[string]string{"rest.extension.classes": " " + extensionClasses + " "}
	for _, opts := range []string{
		"-Xmx1g -Djava.security.auth.login.config=" + jaas,
		`-Djava.security.auth.login.config="` + jaas + `" -Dother=1`,
		"-Djava.security.auth.login.config=/elsewhere -Djava.security.auth.login.config==" + jaas,
	} {
		auth, err := LoadWorkerAuth(props, opts)
		if err != nil {
			t.Fatalf("KAFKA_OPTS %q: %v", opts, err)
		}
		if user, password := auth.FirstUser(); user != "admin" || password != "s3cret" {
			t.Errorf("KAFKA_OPTS %q: users from the wrong file: %s", opts, user)
		}
	}
	if !AuthConfigured(props) {
		t.Error("AuthConfigured: false for Connect's extension")
	}
	// Both ways, naming the same file, agree.
	props[CredentialsFileKey] = creds
	if _, err := LoadWorkerAuth(props, "-Djava.security.auth.login.config="+jaas); err != nil {
		t.Errorf("both ways, one file: %v", err)
	}
}

// TestConnectsBasicAuthExtensionErrors: each mistake is refused at start, naming the file and what is wrong.
func TestConnectsBasicAuthExtensionErrors(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"rest.extension.classes": extensionClasses}
	entry := func(body string) string { return "KafkaConnect {\n" + body + "\n};\n" }
	module := "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required"
	for _, tt := range []struct {
		name, jaas, opts, own, want string
	}{
		{name: "no KAFKA_OPTS", opts: "-Xmx1g", want: "KAFKA_OPTS names no JAAS login configuration"},
		{name: "missing file", opts: "-Djava.security.auth.login.config=" + filepath.Join(dir, "nope.conf"), want: "nope.conf (-Djava.security.auth.login.config in KAFKA_OPTS): stat"},
		{name: "no KafkaConnect entry", jaas: "KafkaServer {\n" + module + ` file="/x";` + "\n};", want: "no login configuration entry named KafkaConnect"},
		{name: "another module", jaas: entry(`com.example.LdapLoginModule required url="ldap://x";`), want: "entry KafkaConnect holds com.example.LdapLoginModule; cdcd authenticates with one org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule only"},
		{name: "no file option", jaas: entry(module + ";"), want: `PropertyFileLoginModule names no credentials file; add file="/path/credentials.properties"`},
		{name: "unknown option", jaas: entry(module + ` file="/x" debug="true";`), want: `PropertyFileLoginModule has no option "debug"`},
		{name: "unterminated", jaas: "KafkaConnect {\n" + module + ` file="/x";`, want: "entry KafkaConnect: not closed by '};'"},
		{name: "two entries", jaas: entry(module+` file="/x";`) + entry(module+` file="/y";`), want: "the login configuration entry KafkaConnect appears twice"},
		{name: "missing credentials file", jaas: entry(module + ` file="/nonexistent/creds.properties";`),
			want: "the credentials file (file=) of the JAAS login configuration KAFKA_OPTS names: read properties file: open /nonexistent/creds.properties"},
		{name: "differs from cdcd's key", jaas: entry(module + ` file="/x";`), own: "/y", want: "rest.basic.auth.credentials.file=/y and the JAAS login configuration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if tt.jaas != "" {
				opts = "-Djava.security.auth.login.config=" + writeJAAS(t, t.TempDir(), tt.jaas)
			}
			p := map[string]string{"rest.extension.classes": props["rest.extension.classes"]}
			if tt.own != "" {
				p[CredentialsFileKey] = tt.own
			}
			_, err := LoadWorkerAuth(p, opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.jaas != "" && !strings.Contains(err.Error(), "connect_jaas.conf") && tt.own == "" && tt.name != "missing credentials file" {
				t.Errorf("the error does not name the JAAS file: %v", err)
			}
		})
	}
	// A FIFO or device named as the JAAS file is refused without reading it.
	if _, err := LoadWorkerAuth(props, "-Djava.security.auth.login.config=/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
}
