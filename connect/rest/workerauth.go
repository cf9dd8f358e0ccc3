package rest

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/sink/kafka"
)

// Connect's basic authentication: the REST extension a worker names in rest.extension.classes, and the
// login module that reads the credentials file, in the JAAS login configuration's KafkaConnect entry.
const (
	basicAuthExtension      = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	propertyFileLoginModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasEntry               = "KafkaConnect"
	// maxJAASFile bounds the JAAS file read: a login configuration is a few lines.
	maxJAASFile = 1 << 20
)

// LoadWorkerAuth is the REST API's basic authentication as the worker's properties and KAFKA_OPTS ask for it
// (CredentialsFile), nil when they ask for none, with the read-only users of ReadOnlyUsersKey marked.
func LoadWorkerAuth(props map[string]string, kafkaOpts string) (*BasicAuth, error) {
	path, err := CredentialsFile(props, kafkaOpts)
	if err != nil {
		return nil, err
	}
	readOnly := strings.TrimSpace(props[ReadOnlyUsersKey])
	if path == "" {
		if readOnly != "" {
			return nil, fmt.Errorf("%s names read-only users, but basic authentication is off: set %s (or Connect's BasicAuthSecurityRestExtension) or remove it", ReadOnlyUsersKey, CredentialsFileKey)
		}
		return nil, nil
	}
	origin := CredentialsFileKey
	if strings.TrimSpace(props[CredentialsFileKey]) == "" {
		origin = "the credentials file (file=) of the JAAS login configuration KAFKA_OPTS names"
	}
	auth, err := loadCredentials(path, origin)
	if err != nil {
		return nil, err
	}
	if err := auth.markReadOnly(readOnly, path); err != nil {
		return nil, err
	}
	return auth, nil
}

// AuthConfigured reports whether the worker's properties turn basic authentication on, one way or the other.
func AuthConfigured(props map[string]string) bool {
	return strings.TrimSpace(props[CredentialsFileKey]) != "" || namesBasicAuthExtension(props)
}

// CredentialsFile is the credentials file the REST API authenticates against, "" when authentication is off:
// rest.basic.auth.credentials.file (cdcd's key), or, as Connect turns it on, rest.extension.classes naming
// BasicAuthSecurityRestExtension with the JAAS login configuration that -Djava.security.auth.login.config
// names in kafkaOpts (KAFKA_OPTS): the file= of the PropertyFileLoginModule in its KafkaConnect entry. When
// both are given they must name the same file.
func CredentialsFile(props map[string]string, kafkaOpts string) (string, error) {
	own := strings.TrimSpace(props[CredentialsFileKey])
	if !namesBasicAuthExtension(props) {
		return own, nil
	}
	jaasPath := jaasConfigPath(kafkaOpts)
	if jaasPath == "" {
		if own != "" {
			return own, nil
		}
		return "", fmt.Errorf("rest.extension.classes names BasicAuthSecurityRestExtension, but KAFKA_OPTS names no JAAS login configuration: "+
			"set KAFKA_OPTS=-Djava.security.auth.login.config=FILE (a %s entry with %s required file=\"…\";), or set %s to the credentials file", jaasEntry, propertyFileLoginModule, CredentialsFileKey)
	}
	file, err := jaasCredentialsFile(jaasPath)
	if err != nil {
		return "", fmt.Errorf("rest.extension.classes names BasicAuthSecurityRestExtension: the JAAS login configuration %s (-Djava.security.auth.login.config in KAFKA_OPTS): %w", jaasPath, err)
	}
	if own != "" && own != file {
		return "", fmt.Errorf("%s=%s and the JAAS login configuration %s (file=%s) name different credentials files; keep one of them", CredentialsFileKey, own, jaasPath, file)
	}
	return file, nil
}

func namesBasicAuthExtension(props map[string]string) bool {
	for _, class := range strings.Split(props["rest.extension.classes"], ",") {
		if strings.TrimSpace(class) == basicAuthExtension {
			return true
		}
	}
	return false
}

// loginConfigOption is the JVM option naming the JAAS login configuration; "==" (replace, not add to, the
// JDK's own) means the same here. A value may be quoted as a shell would.
var loginConfigOption = regexp.MustCompile(`(?:^|\s)-Djava\.security\.auth\.login\.config==?(?:"([^"]*)"|'([^']*)'|(\S+))`)

// jaasConfigPath is the file -Djava.security.auth.login.config names in the JVM options opts (the last one
// given wins, as in the JVM), or "".
func jaasConfigPath(opts string) string {
	all := loginConfigOption.FindAllStringSubmatch(opts, -1)
	if len(all) == 0 {
		return ""
	}
	m := all[len(all)-1]
	return m[1] + m[2] + m[3]
}

// jaasCredentialsFile reads a JAAS login configuration file and returns the credentials file its KafkaConnect
// entry's one PropertyFileLoginModule names.
func jaasCredentialsFile(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, maxJAASFile+1))
	if err != nil {
		return "", err
	}
	if len(text) > maxJAASFile {
		return "", fmt.Errorf("larger than %d bytes; a login configuration is a few lines", maxJAASFile)
	}
	modules, err := kafka.JAASFileEntry(string(text), jaasEntry)
	if err != nil {
		return "", err
	}
	if len(modules) != 1 || modules[0].Class != propertyFileLoginModule {
		classes := make([]string, len(modules))
		for i, m := range modules {
			classes[i] = m.Class
		}
		return "", fmt.Errorf("entry %s holds %s; cdcd authenticates with one %s only", jaasEntry, strings.Join(classes, ", "), propertyFileLoginModule)
	}
	file := ""
	for option, value := range modules[0].Options {
		if option != "file" {
			return "", fmt.Errorf("entry %s: PropertyFileLoginModule has no option %q (it takes file=\"…\" only); remove it", jaasEntry, option)
		}
		file = value
	}
	if strings.TrimSpace(file) == "" {
		return "", fmt.Errorf("entry %s: PropertyFileLoginModule names no credentials file; add file=\"/path/credentials.properties\"", jaasEntry)
	}
	return file, nil
}
