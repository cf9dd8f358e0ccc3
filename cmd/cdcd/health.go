package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/rest"
)

const healthUsageLines = `  cdcd health [--url http://HOST:PORT] [--timeout 5s] [WORKER.properties]`

// defaultHealthURL is the REST API of a worker run with Connect's default listeners (http://:8083).
const defaultHealthURL = "http://127.0.0.1:8083"

// healthCommand runs `cdcd health`: GET /health of the local daemon, found at --url or through the worker
// properties' first listener (its TLS settings and its basic-auth credentials file included). It returns nil
// only for a 200 {"status":"healthy"}, so the scratch image, which has no shell or curl, can use it as its
// HEALTHCHECK. Failed tasks are reported but leave the worker healthy, as GET /health does: restarting the
// process would not repair a connector's config or database.
func healthCommand(args []string, stdout io.Writer) error {
	usage := errors.New("usage:\n" + healthUsageLines)
	fs := flag.NewFlagSet("cdcd health", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the returned error says what is wrong
	base := fs.String("url", "", "the REST API's base URL (default: the worker properties' listener, else "+defaultHealthURL+")")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if len(positional) > 1 {
		return usage
	}
	target := healthTarget{url: *base, client: &http.Client{}}
	if len(positional) == 1 {
		if target, err = workerHealthTarget(positional[0], *base); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	endpoint := strings.TrimSuffix(cmp.Or(target.url, defaultHealthURL), "/") + "/health"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if target.auth != nil {
		req.SetBasicAuth(target.auth.FirstUser())
	}
	resp, err := target.client.Do(req)
	if err != nil {
		return fmt.Errorf("health: no answer from %s (is cdcd running there?): %w", endpoint, err)
	}
	defer resp.Body.Close()
	var st struct {
		Status      string `json:"status"`
		Message     string `json:"message"`
		FailedTasks []struct {
			Connector string `json:"connector"`
			Task      int    `json:"task"`
		} `json:"failed_tasks"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &st)
	}
	if resp.StatusCode != http.StatusOK || err != nil || st.Status != "healthy" {
		return fmt.Errorf("health: %s: not healthy: %s %s", endpoint, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "%s: healthy", endpoint)
	if n := len(st.FailedTasks); n > 0 {
		failed := make([]string, n)
		for i, t := range st.FailedTasks {
			failed[i] = fmt.Sprintf("%s/%d", t.Connector, t.Task)
		}
		fmt.Fprintf(stdout, " (FAILED tasks, which leave the worker healthy: %s)", strings.Join(failed, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}

// healthTarget is where and how `cdcd health` asks: the REST API's base URL ("": defaultHealthURL), the HTTP
// client, and the credentials when the API requires basic authentication (nil: none).
type healthTarget struct {
	url    string
	client *http.Client
	auth   *rest.BasicAuth
}

// workerHealthTarget reads the worker properties the daemon runs with: the REST API's URL from the first
// listener (explicit wins), a client that trusts the listener's certificate (the worker's ssl.truststore.*, as
// forwarding between workers does), and the credentials file's first user when the API requires basic
// authentication.
func workerHealthTarget(workerPath, explicit string) (healthTarget, error) {
	file, err := config.LoadPropertiesFile(workerPath)
	if err != nil {
		return healthTarget{}, err
	}
	props := config.PropertiesMap(file)
	target := healthTarget{url: explicit, client: &http.Client{}}
	if listener := strings.TrimSpace(strings.Split(props["listeners"], ",")[0]); explicit == "" && listener != "" {
		if target.url, err = localURL(listener); err != nil {
			return healthTarget{}, err
		}
	}
	if rest.HTTPS([]string{target.url}) {
		if target.client, err = rest.ForwardClient(props); err != nil {
			return healthTarget{}, err
		}
	}
	path, err := rest.CredentialsFile(props, os.Getenv("KAFKA_OPTS"))
	if err != nil {
		return healthTarget{}, err
	}
	if path != "" {
		if target.auth, err = rest.LoadBasicAuth(path); err != nil {
			return healthTarget{}, err
		}
	}
	return target, nil
}

// localURL is the URL at which this machine reaches a listener: a wildcard or empty host is the loopback
// address (the daemon listens on every interface, loopback included).
func localURL(listener string) (string, error) {
	u, err := url.Parse(listener)
	if err != nil {
		return "", fmt.Errorf("listeners: %w", err)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" || port == "0" {
		return "", fmt.Errorf("listeners: %s has no fixed port; give cdcd health --url", listener)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return u.Scheme + "://" + net.JoinHostPort(host, port), nil
}
