package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// The REST API as an attacker who reaches its port meets it (issue 35): a standalone worker that needs no
// Kafka (bootstrap.servers=127.0.0.1:1 keeps the API up), with basic authentication off and on, and a
// distributed worker of the test bed's Kafka.

// attackedWorker is a running worker and how to reach its REST API.
type attackedWorker struct {
	t              *testing.T
	p              *cdcdProcess
	addr           string // host:port
	user, password string // "" when authentication is off
}

// The ways basic authentication is turned on: none, cdcd's key, Connect's extension with its JAAS file.
const (
	authOff = iota
	authCdcdKey
	authConnectJAAS
)

// startAttackedWorker starts a standalone worker without Kafka, or a distributed one in a group of its own.
func startAttackedWorker(t *testing.T, auth int, distributed bool) *attackedWorker {
	t.Helper()
	dir := t.TempDir()
	props := workerProps([]string{"127.0.0.1:1"}, filepath.Join(dir, "offsets.dat"))
	if distributed {
		group := fmt.Sprintf("rest-attack-%d", time.Now().UnixNano())
		props = distributedProps(testenv.Kafka(t), group, clusterTopicsOf(group), freePort(t))
	}
	w := &attackedWorker{t: t}
	if auth != authOff {
		creds := filepath.Join(dir, "credentials.properties")
		if err := os.WriteFile(creds, []byte("admin: attack-test-pass\nviewer: viewer-pass\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		props["rest.basic.auth.readonly.users"] = "viewer"
		w.user, w.password = "admin", "attack-test-pass"
		if auth == authCdcdKey {
			props["rest.basic.auth.credentials.file"] = creds
		} else {
			jaas := filepath.Join(dir, "connect_jaas.conf")
			entry := "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n    file=\"" + creds + "\";\n};\n"
			if err := os.WriteFile(jaas, []byte(entry), 0o600); err != nil {
				t.Fatal(err)
			}
			props["rest.extension.classes"] = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
			t.Setenv("KAFKA_OPTS", "-Xmx256m -Djava.security.auth.login.config="+jaas) // the worker inherits the environment
		}
	}
	worker := filepath.Join(dir, "worker.properties")
	writeProperties(t, worker, props)
	if distributed {
		w.p = startCdcdProcess(t, "distributed", worker)
	} else {
		w.p = startCdcd(t, worker)
	}
	w.addr = listeningAddress(t, w.p)
	w.waitHealthy()
	return w
}

// request sends one request; the credentials go along when authenticated.
func (w *attackedWorker) request(method, path, contentType string, body io.Reader, authenticated bool, header ...string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(method, "http://"+w.addr+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if authenticated && w.user != "" {
		req.SetBasicAuth(w.user, w.password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitHealthy waits until GET /health answers 200 (the worker answers, and has started).
func (w *attackedWorker) waitHealthy() {
	w.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if w.p.exited() {
			w.t.Fatal("cdcd exited")
		}
		if code, _ := w.request("GET", "/health", "", nil, true); code == 200 {
			return
		}
	}
	w.t.Fatal("GET /health did not answer 200 within a minute")
}

// status reads a line of the process's /proc/<pid>/status in kB: VmRSS (now) or VmHWM (the peak).
func (w *attackedWorker) status(field string) int {
	w.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.p.cmd.Process.Pid))
	if err != nil {
		w.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		w.t.Fatalf("no %s in /proc/<pid>/status", field)
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return kb
}

// restSeries counts the cdcd_rest_requests_total series GET /metrics serves.
func (w *attackedWorker) restSeries() int {
	w.t.Helper()
	code, body := w.request("GET", "/metrics", "", nil, true)
	if code != 200 {
		w.t.Fatalf("GET /metrics: %d", code)
	}
	return strings.Count(body, "\ncdcd_rest_requests_total{")
}

// rawRequest sends a request's head and then body over its own connection, body written while the answer is
// read (the server may answer before the body is all sent), and returns the status.
func (w *attackedWorker) rawRequest(head string, body io.Reader) int {
	w.t.Helper()
	conn, err := net.Dial("tcp", w.addr)
	if err != nil {
		w.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		w.t.Fatal(err)
	}
	go io.Copy(conn, body) // ends with an error once the server closes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		w.t.Fatalf("no answer to %q: %v", strings.SplitN(head, "\r\n", 2)[0], err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// manyKeys is a JSON body of about size bytes: a connector config (or task config list) of distinct keys,
// each a map entry once decoded.
func manyKeys(prefix, suffix string, size int) []byte {
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteString(prefix)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `"k%d":"",`, i)
	}
	b.WriteString(`"end":""` + suffix)
	return []byte(b.String())
}

func TestRESTAttacks(t *testing.T) {
	for _, mode := range []struct {
		name        string
		auth        int
		distributed bool
	}{
		{"standalone, auth off", authOff, false},
		{"standalone, auth on", authCdcdKey, false},
		{"standalone, auth on as Connect", authConnectJAAS, false},
		{"distributed, auth on", authCdcdKey, true},
	} {
		auth, withAuth := mode.auth, mode.auth != authOff
		t.Run(mode.name, func(t *testing.T) {
			w := startAttackedWorker(t, auth, mode.distributed)
			if withAuth {
				if code, _ := w.request("GET", "/connectors", "", nil, false); code != 401 {
					t.Fatalf("GET /connectors without credentials: %d, want 401", code)
				}
			}
			authHeader := ""
			if withAuth {
				req, _ := http.NewRequest("GET", "/", nil)
				req.SetBasicAuth(w.user, w.password)
				authHeader = "Authorization: " + req.Header.Get("Authorization") + "\r\n"
			}

			// Item 1: made-up methods, without credentials, add no series (before: one per method, for good).
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := &http.Client{}
					for i := range 250 {
						req, _ := http.NewRequest("M"+strconv.Itoa(g*1000+i), "http://"+w.addr+"/connectors", nil)
						if resp, err := client.Do(req); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				}()
			}
			wg.Wait()
			if n := w.restSeries(); n > 40 {
				t.Errorf("%d cdcd_rest_requests_total series after 2,000 made-up methods; want a bounded handful", n)
			}
			// A method (or any header) beyond the header limit is refused whole: 431.
			if code := w.rawRequest(strings.Repeat("M", 64<<10)+" /connectors HTTP/1.1\r\nHost: x\r\n\r\n", strings.NewReader("")); code != 431 && code != 400 {
				t.Errorf("a 64 KiB method: %d, want 431 (or 400)", code)
			}
			if code, _ := w.request("GET", "/connectors", "", nil, true, "X-Big", strings.Repeat("x", 100<<10)); code != 431 {
				t.Errorf("a 100 KiB header: %d, want 431", code)
			}

			// Item 2: 15 MiB bodies (under the old 16 MiB bound), four at once, to a config endpoint and to the internal task-configs endpoint
			// (exempt from authentication): refused before they are decoded, memory bounded.
			hwmBefore := w.status("VmHWM")
			config := manyKeys(`{"name":"x","config":{`, `}}`, 15<<20)
			tasks := manyKeys(`[{`, `}]`, 15<<20)
			codes := make([]int, 4)
			for i, req := range []struct {
				head string
				body []byte
			}{
				{"POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + authHeader, config},
				{"PUT /connectors/x/config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + authHeader, config[len(`{"name":"x","config":`) : len(config)-1]},
				{"POST /connectors/x/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n", tasks},
				{"POST /connectors/x/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n", tasks},
			} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[i] = w.rawRequest(req.head+"Content-Length: "+strconv.Itoa(len(req.body))+"\r\n\r\n", strings.NewReader(string(req.body)))
				}()
			}
			wg.Wait()
			grown := (w.status("VmHWM") - hwmBefore) / 1024
			t.Logf("15 MiB bodies: answers %v; peak RSS grew by %d MB (now %d MB)", codes, grown, w.status("VmRSS")/1024)
			for i, code := range codes {
				if code < 400 || code >= 500 {
					t.Errorf("15 MiB body %d: %d, want a 4xx", i, code)
				}
			}
			if codes[0] != 413 || codes[1] != 413 {
				t.Errorf("15 MiB config bodies: %v, want 413", codes[:2])
			}
			if grown > 200 {
				t.Errorf("peak RSS grew by %d MB for four 15 MiB bodies; want less than 200 MB", grown)
			}
			if withAuth {
				// Without credentials, no body is read at all.
				if code := w.rawRequest("POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(config))+"\r\n\r\n", strings.NewReader(string(config))); code != 401 {
					t.Errorf("a 15 MiB body without credentials: %d, want 401", code)
				}
			}

			// Item 6: what a web page of another site can send changes nothing.
			for _, c := range []struct {
				method, path, contentType, body, origin string
				want                                    int
			}{
				{"POST", "/connectors/x/restart", "", "", "https://evil.example", 403},
				{"PUT", "/connectors/x/stop", "", "", "https://evil.example", 403},
				{"DELETE", "/connectors/x", "", "", "null", 403},
				{"POST", "/connectors", "text/plain", `{"name":"x","config":{}}`, "", 415},
				{"POST", "/connectors", "application/x-www-form-urlencoded", `{"name":"x","config":{}}`, "", 415},
				{"POST", "/connectors", "", `{"name":"x","config":{}}`, "", 415},
				{"POST", "/connectors/x/restart", "text/plain", "", "", 415},
			} {
				var headers []string
				if c.origin != "" {
					headers = []string{"Origin", c.origin}
				}
				if code, body := w.request(c.method, c.path, c.contentType, strings.NewReader(c.body), true, headers...); code != c.want {
					t.Errorf("%s %s (Content-Type %q, Origin %q): %d %s, want %d", c.method, c.path, c.contentType, c.origin, code, body, c.want)
				}
			}

			// Item 8: names Connect refuses (control characters), and names no URL path reaches.
			if code, body := w.request("POST", "/connectors", "application/json", strings.NewReader(`{"name":"a\nb","config":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector"}}`), true); code != 400 ||
				!strings.Contains(body, "String may not contain control sequences but had the following ASCII chars: 10") {
				t.Errorf("a name with a newline: %d %s", code, body)
			}
			if code, body := w.request("POST", "/connectors", "application/json", strings.NewReader(`{"name":"..","config":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector"}}`), true); code != 400 || !strings.Contains(body, "cannot be addressed in a URL path") {
				t.Errorf(`the name "..": %d %s`, code, body)
			}

			if withAuth {
				// A read-only user looks, and changes nothing.
				w.user, w.password = "viewer", "viewer-pass"
				if code, _ := w.request("GET", "/connectors", "", nil, true); code != 200 {
					t.Errorf("a read-only user's GET /connectors: %d", code)
				}
				if code, body := w.request("PUT", "/connectors/x/pause", "", nil, true); code != 403 || !strings.Contains(body, "may only read") {
					t.Errorf("a read-only user's pause: %d %s", code, body)
				}
				w.user, w.password = "admin", "attack-test-pass"
			}

			w.waitHealthy()
			if n := w.restSeries(); n > 40 {
				t.Errorf("%d cdcd_rest_requests_total series at the end", n)
			}
		})
	}
}

// TestRESTSlowClients: a body trickled a byte every 2 s is cut off at the read deadline, and idle keep-alive
// connections are closed, where before both were held for as long as the client liked.
func TestRESTSlowClients(t *testing.T) {
	w := startAttackedWorker(t, authCdcdKey, false)
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := net.Dial("tcp", w.addr)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		req, _ := http.NewRequest("POST", "/", nil)
		req.SetBasicAuth(w.user, w.password)
		fmt.Fprintf(conn, "POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: %s\r\nContent-Length: 100\r\n\r\n", req.Header.Get("Authorization"))
		answered := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(conn).ReadString('\n')
			answered <- line
		}()
		for sent := 0; sent < 100; sent++ {
			select {
			case line := <-answered:
				t.Logf("trickled body cut off after %d bytes: %q", sent, strings.TrimSpace(line))
				return
			case <-time.After(2 * time.Second):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				t.Logf("trickled body cut off after %d bytes: %v", sent, err)
				return
			}
		}
		t.Error("a body trickled a byte every 2 s was read to its end (200 s)")
	}()

	const idle = 50
	for range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", w.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			// Now idle on a keep-alive connection: the server must close it (EOF), within a generous bound.
			conn.SetReadDeadline(time.Now().Add(3 * time.Minute))
			if _, err := r.ReadByte(); err != io.EOF {
				t.Errorf("an idle keep-alive connection was not closed by the server: %v", err)
			}
		}()
	}
	wg.Wait()
	w.waitHealthy()
}
