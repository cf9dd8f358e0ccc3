package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestStatusPageInChromium runs a PostgreSQL connector, streams a few changes, and renders GET /ui/ in a
// real browser (Debian's chromium, headless): the page, from what it fetched itself, shows the connector's
// task RUNNING with its lag in time and in WAL bytes, and the connector's replication slot. The
// screenshot and the rendered DOM are kept under the test's artifact directory.
func TestStatusPageInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("needs Debian's chromium: apt-get install -y chromium")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dsn := testenv.NewPostgresDB(t)
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE ui (id int PRIMARY KEY, v text)", "INSERT INTO ui VALUES (1, 'a')")
	brokers := testenv.Kafka(t)
	dir := t.TempDir()
	prefix := testenv.NewTopicPrefix(t) + "ui"
	const name = "uistatus"
	worker := workerProps(brokers, filepath.Join(dir, "offsets"))
	worker["cdcd.slots.refresh.interval.ms"] = "500"
	conn := pgConnector(t, dsn, name, prefix, "public.ui")
	p := startStandalone(t, dir, worker, conn)
	defer p.stop()
	base := "http://" + listeningAddress(t, p)

	waitMetric(t, base, `cdcd_connected{connector="`+name+`",task="0"}`, 1)
	execAll(t, ctx, db, "INSERT INTO ui VALUES (2, 'b')", "UPDATE ui SET v = 'c' WHERE id = 1")
	waitMetric(t, base, `cdcd_events_total{connector="`+name+`",op="u",task="0"}`, 1)
	waitOwnedSlot(t, base, conn["slot.name"], name)

	artifacts := testenv.ArtifactDir(t)
	var dom, task string
	for deadline := time.Now().Add(time.Minute); ; {
		dom = runChromium(t, ctx, browser, "--dump-dom", base+"/ui/")
		task = regexp.MustCompile(`<tr class="task" data-connector="` + name + `" data-task="0">.*?</tr>`).FindString(dom)
		if strings.Contains(task, `lag-ms" data-value=`) || time.Now().After(deadline) {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(artifacts, "ui.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}
	screenshot := filepath.Join(artifacts, "ui.png")
	runChromium(t, ctx, browser, "--screenshot="+screenshot, "--window-size=1400,1200", base+"/ui/")
	if st, err := os.Stat(screenshot); err != nil || st.Size() == 0 {
		t.Errorf("chromium wrote no screenshot at %s: %v", screenshot, err)
	}
	t.Logf("screenshot: %s", screenshot)

	if task == "" {
		t.Fatalf("the rendered page has no row for connector %s's task 0:\n%s", name, dom)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`class="state RUNNING"`),
		regexp.MustCompile(`class="num lag-ms" data-value="\d+(\.\d+)?">\d+(\.\d+)? m?s<`),
		regexp.MustCompile(`class="num lag-bytes" data-value="\d+">\d+(\.\d+)? (B|KiB|MiB)<`),
		regexp.MustCompile(`class="connected">yes<`),
	} {
		if !want.MatchString(task) {
			t.Errorf("connector %s's task row lacks %s:\n%s", name, want, task)
		}
	}
	slot := regexp.MustCompile(`<tr class="slot" data-slot="` + conn["slot.name"] + `"[^>]*>.*?</tr>`).FindString(dom)
	if !strings.Contains(slot, "<td>"+name+"</td>") || !strings.Contains(slot, `class="status owned"`) ||
		!regexp.MustCompile(`class="num retained" data-value="\d+"`).MatchString(slot) {
		t.Errorf("the rendered page does not show slot %s owned by %s with its retained WAL:\n%s", conn["slot.name"], name, slot)
	}
	for _, secret := range append([]string{conn["database.password"]}, testenv.Secrets...) {
		if secret != "" && strings.Contains(dom, secret) {
			t.Errorf("the rendered page carries the secret %q", secret)
		}
	}
}

// waitOwnedSlot waits until GET /slots reports the slot as the connector's, with its retained WAL measured.
func waitOwnedSlot(t *testing.T, base, slot, connector string) {
	t.Helper()
	var last []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(base + "/slots")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Slots []struct {
				Name      string  `json:"slot_name"`
				Connector *string `json:"connector"`
				Status    string  `json:"status"`
				Retained  *int64  `json:"retained_wal_bytes"`
			} `json:"slots"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range body.Slots {
			if s.Name == slot && s.Connector != nil && *s.Connector == connector && s.Status == "owned" && s.Retained != nil {
				return
			}
		}
		last, _ = json.Marshal(body)
	}
	t.Fatalf("GET /slots never showed slot %s owned by %s: %s", slot, connector, last)
}

// TestStatusPageBehindBasicAuth: with the REST API behind basic authentication, a browser without credentials
// gets no page, and one given them (in the URL) gets the page, whose own requests to the API pass too.
func TestStatusPageBehindBasicAuth(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("needs Debian's chromium: apt-get install -y chromium")
	}
	worker, authURL, p := startAuthenticatedWorker(t)
	defer p.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for deadline := time.Now().Add(time.Minute); exec.Command(cdcdBinary, "health", worker).Run() != nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker never became healthy")
		}
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	u.User = nil
	if dom := runChromium(t, ctx, browser, "--dump-dom", u.String()+"/ui/"); strings.Contains(dom, `id="connectors"`) {
		t.Errorf("without credentials the browser got the status page:\n%s", dom)
	}
	dom := runChromium(t, ctx, browser, "--dump-dom", authURL+"/ui/")
	if !strings.Contains(dom, `<span id="health" class="badge healthy">healthy</span>`) || !strings.Contains(dom, `<p id="problem" hidden="">`) {
		t.Errorf("with credentials the page did not read the API:\n%s", dom)
	}
	if strings.Contains(dom, password) {
		t.Error("the rendered page carries the REST API's password")
	}
}

// runChromium runs headless chromium once, in a fresh profile, with nothing of its own on the network. The
// virtual time budget lets the page's first polls (its fetches and timers) complete before chromium dumps the
// DOM or takes the screenshot.
func runChromium(t *testing.T, ctx context.Context, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=12000"}
	cmd := exec.CommandContext(ctx, browser, append(flags, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 4000))
	}
	return string(out)
}
