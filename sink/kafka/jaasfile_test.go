package kafka

import (
	"strings"
	"testing"
)

// FuzzJAASFileEntry reads any text as a JAAS login configuration file: an error or the entry's modules, each
// with a class and one of the four flags, never a panic or a hang.
func FuzzJAASFileEntry(f *testing.F) {
	for _, seed := range []string{
		"KafkaConnect {\n org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file=\"/etc/creds\";\n};",
		"/* c */ A { m optional; }; KafkaConnect { m required a=\"x\" b='y'; n sufficient; }; // end",
		"KafkaConnect { }; ", "KafkaConnect {", "KafkaConnect { m required file=1; };", "{ };", "\"KafkaConnect\" { m requisite; };",
		"KafkaConnect { m required file=\"\\101\\n\"; } ", "KafkaConnect { m required; }; KafkaConnect { m required; };",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		modules, err := JAASFileEntry(text, "KafkaConnect")
		if err != nil {
			return
		}
		if len(modules) == 0 {
			t.Fatalf("%q: an entry without modules was accepted", text)
		}
		for _, m := range modules {
			if m.Class == "" || !strings.Contains("REQUIRED REQUISITE SUFFICIENT OPTIONAL", m.Flag) || m.Flag == "" {
				t.Fatalf("%q: module %+v", text, m)
			}
		}
	})
}
