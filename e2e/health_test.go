package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestHealthSubcommand runs `cdcd health`, the scratch image's HEALTHCHECK, against a real standalone worker
// whose REST API requires basic authentication: given the worker's properties it finds the listener and the
// credentials and exits 0 once the worker is ready; against a closed port it exits 1 saying nothing answers.
func TestHealthSubcommand(t *testing.T) {
	worker, _, p := startAuthenticatedWorker(t)
	defer p.stop()

	var out []byte
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out, err = exec.Command(cdcdBinary, "health", worker).CombinedOutput(); err == nil {
			break
		}
	}
	if err != nil || !strings.Contains(string(out), "/health: healthy") {
		t.Fatalf("cdcd health %s against the running worker: %v\n%s", worker, err, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	out, err = exec.Command(cdcdBinary, "health", "--url", "http://"+closed).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "no answer from http://"+closed+"/health") {
		t.Errorf("cdcd health against a closed port: %v\n%s", err, out)
	}
}

// TestContainerHealthchecks: the image's HEALTHCHECK and the compose file's cdcd healthcheck run `cdcd health` on
// the worker properties the image's CMD starts with (no shell or curl exists in the scratch image).
func TestContainerHealthchecks(t *testing.T) {
	worker := dockerfileCmd(t)[1]
	want := []string{"/cdcd", "health", worker}
	m := regexp.MustCompile(`(?m)^HEALTHCHECK .*\bCMD (\[.*\])$`).FindStringSubmatch(readDockerfile(t))
	var cmd []string
	if m == nil || json.Unmarshal([]byte(m[1]), &cmd) != nil || !slices.Equal(cmd, want) {
		t.Errorf("the Dockerfile's HEALTHCHECK is %q, want CMD %q", m, want)
	}
	hc := loadCompose(t).Services["cdcd"].Healthcheck
	if hc == nil || !slices.Equal(hc.Test, append([]string{"CMD"}, want...)) {
		t.Errorf("the compose cdcd service's healthcheck is %+v, want CMD %q", hc, want)
	}
}

// startAuthenticatedWorker runs a standalone worker without connectors on a fixed port, its REST API behind basic
// authentication (user ops); it returns the worker file, the API's URL with the credentials in it, and the process
// once it listens.
func startAuthenticatedWorker(t *testing.T) (worker, authURL string, p *cdcdProcess) {
	t.Helper()
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.properties")
	if err := os.WriteFile(creds, []byte("ops: health-check-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	props := workerProps(testenv.Kafka(t), filepath.Join(dir, "offsets"))
	port := freePort(t)
	props["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", port)
	props["rest.basic.auth.credentials.file"] = creds
	worker = filepath.Join(dir, "worker.properties")
	writeProperties(t, worker, props)
	p = startCdcd(t, worker)
	listeningAddress(t, p)
	return worker, fmt.Sprintf("http://ops:health-check-pass@127.0.0.1:%d", port), p
}
