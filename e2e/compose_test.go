package e2e

// The compose stack and the image cannot be started here (no container engine), so these unit-tier tests
// read docker-compose.yml and the Dockerfile and check what a broken stack would get wrong first: source
// databases without logical decoding or full row images, a Kafka without its KRaft roles, cdcd mounting
// files that do not exist or pointing at hosts and ports no service offers.

import (
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/source/postgres"
)

// repoRoot is where docker-compose.yml and the Dockerfile live; go test runs in e2e/.
const repoRoot = ".."

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string                       `yaml:"image"`
	Build       any                          `yaml:"build"`
	Command     stringOrList                 `yaml:"command"`
	Environment map[string]string            `yaml:"environment"`
	Volumes     []string                     `yaml:"volumes"`
	Ports       []string                     `yaml:"ports"`
	DependsOn   map[string]composeDependency `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

type composeDependency struct {
	Condition string `yaml:"condition"`
}

// stringOrList is a compose command: a shell-style string or an argument list.
type stringOrList []string

func (s *stringOrList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = strings.Fields(n.Value)
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*s = list
	return nil
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	for _, name := range []string{"postgres", "mariadb", "kafka", "schema-registry", "cdcd"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("docker-compose.yml has no %s service (services: %v)", name, slices.Sorted(maps.Keys(c.Services)))
		}
	}
	return c
}

// bindMounts returns a service's host-path mounts, container path → host path relative to the repo root.
func bindMounts(t *testing.T, s composeService) map[string]string {
	t.Helper()
	mounts := map[string]string{}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
			continue // a named volume
		}
		mounts[parts[1]] = parts[0]
	}
	return mounts
}

func hasArg(args []string, want string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, want) })
}

func TestComposeSourceDatabases(t *testing.T) {
	c := loadCompose(t)

	pg := c.Services["postgres"]
	if !strings.HasPrefix(pg.Image, "postgres:15") {
		t.Errorf("postgres image %q, want postgres:15 (what the test bed runs)", pg.Image)
	}
	if !hasArg(pg.Command, "wal_level=logical") {
		t.Errorf("postgres command %q lacks -c wal_level=logical: pgoutput needs logical decoding", pg.Command)
	}
	if !slices.Contains(pg.Ports, "55432:5432") {
		t.Errorf("postgres ports %q, want 55432:5432 (the test bed's port)", pg.Ports)
	}

	maria := c.Services["mariadb"]
	if !strings.HasPrefix(maria.Image, "mariadb:10.11") {
		t.Errorf("mariadb image %q, want mariadb:10.11", maria.Image)
	}
	for _, arg := range []string{"--binlog-format=ROW", "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--gtid-strict-mode=ON"} {
		if !hasArg(maria.Command, arg) {
			t.Errorf("mariadb command %q lacks %s", maria.Command, arg)
		}
	}
	if !slices.ContainsFunc(maria.Command, func(a string) bool { return strings.HasPrefix(a, "--log-bin") }) ||
		!slices.ContainsFunc(maria.Command, func(a string) bool { return strings.HasPrefix(a, "--server-id=") }) {
		t.Errorf("mariadb command %q must enable the binlog (--log-bin) with a --server-id", maria.Command)
	}
	if !slices.Contains(maria.Ports, "53306:3306") {
		t.Errorf("mariadb ports %q, want 53306:3306 (the test bed's port)", maria.Ports)
	}
}

func TestComposeKafkaIsASingleKRaftNode(t *testing.T) {
	c := loadCompose(t)
	k := c.Services["kafka"]
	if !strings.HasPrefix(k.Image, "apache/kafka:") {
		t.Errorf("kafka image %q, want apache/kafka", k.Image)
	}
	env := k.Environment
	roles := strings.Split(env["KAFKA_PROCESS_ROLES"], ",")
	if !slices.Contains(roles, "broker") || !slices.Contains(roles, "controller") {
		t.Errorf("KAFKA_PROCESS_ROLES=%q, want broker,controller (one KRaft node)", env["KAFKA_PROCESS_ROLES"])
	}
	controller := env["KAFKA_CONTROLLER_LISTENER_NAMES"]
	listenerPort := regexp.MustCompile(controller + `://[^:]*:(\d+)`).FindStringSubmatch(env["KAFKA_LISTENERS"])
	if controller == "" || listenerPort == nil {
		t.Fatalf("KAFKA_LISTENERS=%q has no %q listener", env["KAFKA_LISTENERS"], controller)
	}
	if want := env["KAFKA_NODE_ID"] + "@kafka:" + listenerPort[1]; env["KAFKA_CONTROLLER_QUORUM_VOTERS"] != want {
		t.Errorf("KAFKA_CONTROLLER_QUORUM_VOTERS=%q, want %q (this node, on its controller listener)", env["KAFKA_CONTROLLER_QUORUM_VOTERS"], want)
	}
	if env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] != "1" || env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] != "1" {
		t.Error("a single broker needs the internal topics' replication factor at 1")
	}
	if !strings.Contains(c.Services["schema-registry"].Environment["SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS"], "kafka:9092") {
		t.Errorf("the schema registry does not use the kafka:9092 listener: %v", c.Services["schema-registry"].Environment)
	}
}

// TestComposeCdcdIsWiredToTheStack checks cdcd's service against its mounted configs: the files exist, are
// the ones the image's CMD reads, parse as cdcd parses them, and name hosts and ports the stack offers.
func TestComposeCdcdIsWiredToTheStack(t *testing.T) {
	c := loadCompose(t)
	cdcd := c.Services["cdcd"]
	if cdcd.Build == nil {
		t.Error("the cdcd service must build the repository's Dockerfile")
	}
	mounts := bindMounts(t, cdcd)
	for _, inImage := range dockerfileCmd(t)[1:] {
		if _, ok := mounts[inImage]; !ok {
			t.Errorf("the image's CMD reads %s, which the cdcd service does not mount (mounts %v)", inImage, mounts)
		}
	}
	for name, s := range c.Services {
		for inContainer, host := range bindMounts(t, s) {
			if _, err := os.Stat(filepath.Join(repoRoot, host)); err != nil {
				t.Errorf("service %s mounts %s on %s: %v", name, host, inContainer, err)
			}
		}
	}

	workerProps := loadProps(t, mounts["/etc/cdcd/worker.properties"])
	worker, _, err := config.ParseWorker(workerProps, config.Standalone)
	if err != nil {
		t.Fatalf("the compose worker config: %v", err)
	}
	advertised := c.Services["kafka"].Environment["KAFKA_ADVERTISED_LISTENERS"]
	for _, b := range worker.BootstrapServers {
		if !strings.Contains(advertised, "://"+b) {
			t.Errorf("bootstrap.servers %s is not an advertised Kafka listener (%s)", b, advertised)
		}
	}
	// Without authentication, the API is published on the host's loopback only.
	if !slices.Contains(worker.Listeners, "http://0.0.0.0:8083") || !slices.Equal(cdcd.Ports, []string{"127.0.0.1:8083:8083"}) {
		t.Errorf("the REST API must listen on 0.0.0.0:8083 and be published on the host's 127.0.0.1 only: listeners %v ports %v", worker.Listeners, cdcd.Ports)
	}
	if !strings.HasPrefix(worker.OffsetStorageFile, "/var/lib/cdcd/") || !slices.Contains(cdcd.Volumes, "cdcd-offsets:/var/lib/cdcd") {
		t.Errorf("the offsets file %q must live on the cdcd-offsets volume (volumes %v)", worker.OffsetStorageFile, cdcd.Volumes)
	}

	connProps := loadProps(t, mounts["/etc/cdcd/connector.properties"])
	pgCfg, err := postgres.ParseConfig(connProps["name"], connProps, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the compose connector config: %v", err)
	}
	if pgCfg.Host != "postgres" || pgCfg.Port != 5432 || pgCfg.DBName != c.Services["postgres"].Environment["POSTGRES_DB"] {
		t.Errorf("the connector reads %s:%d/%s, not the postgres service", pgCfg.Host, pgCfg.Port, pgCfg.DBName)
	}
	if pgCfg.PublicationMode != "filtered" {
		t.Errorf("publication.autocreate.mode=%s: use filtered, all_tables fails on tables without a replica identity", pgCfg.PublicationMode)
	}

	for _, dep := range []string{"postgres", "kafka"} {
		if cdcd.DependsOn[dep].Condition != "service_healthy" {
			t.Errorf("cdcd must wait for %s to be healthy (depends_on %v)", dep, cdcd.DependsOn)
		}
	}
	for name, s := range c.Services {
		for dep, d := range s.DependsOn {
			if d.Condition == "service_healthy" && c.Services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
			}
		}
	}
}

func loadProps(t *testing.T, repoPath string) map[string]string {
	t.Helper()
	props, err := config.LoadPropertiesFile(filepath.Join(repoRoot, repoPath))
	if err != nil {
		t.Fatal(err)
	}
	return config.PropertiesMap(props)
}

func readDockerfile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines so one RUN is one line.
	return strings.ReplaceAll(string(data), "\\\n", " ")
}

// dockerfileCmd returns the final CMD's arguments (exec form).
func dockerfileCmd(t *testing.T) []string {
	t.Helper()
	var cmd []string
	for _, line := range strings.Split(readDockerfile(t), "\n") {
		if rest, ok := strings.CutPrefix(line, "CMD "); ok {
			if err := json.Unmarshal([]byte(rest), &cmd); err != nil {
				t.Fatalf("CMD %s is not in exec form: %v", rest, err)
			}
		}
	}
	if len(cmd) < 3 || cmd[0] != "standalone" {
		t.Fatalf("CMD %q, want standalone WORKER CONNECTOR", cmd)
	}
	return cmd
}

func TestDockerfileBuildsAStaticNonRootImage(t *testing.T) {
	text := readDockerfile(t)
	var stages []string
	var build, user string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "FROM "):
			stages = append(stages, line)
			user = ""
		case strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build"):
			build = line
		case strings.HasPrefix(line, "USER "):
			user = strings.TrimPrefix(line, "USER ")
		}
	}
	if len(stages) < 2 || !strings.Contains(stages[0], "golang:") || !strings.Contains(text, "GO_VERSION=1.26") {
		t.Errorf("want a golang:1.26 builder stage and a runtime stage: %q", stages)
	}
	if !regexp.MustCompile(`\bCGO_ENABLED=0\b.*\bgo build\b.*\s\./cmd/cdcd\b`).MatchString(build) {
		t.Errorf("the build must compile ./cmd/cdcd with CGO_ENABLED=0: %q", build)
	}
	if last := stages[len(stages)-1]; !strings.Contains(last, "scratch") && !strings.Contains(last, "distroless") {
		t.Errorf("the runtime stage %q should be scratch or distroless", last)
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("the runtime stage runs as %q, want a non-root user", user)
	}
	for _, want := range []string{`ENTRYPOINT ["/cdcd"]`, "EXPOSE 8083", "ca-certificates.crt"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
	if got := dockerfileCmd(t); !slices.Equal(got, []string{"standalone", "/etc/cdcd/worker.properties", "/etc/cdcd/connector.properties"}) {
		t.Errorf("CMD %q", got)
	}
}
