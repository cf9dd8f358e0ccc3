package connect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
)

// corpusDir holds connector and worker configs people published, each as published (a connector's
// JSON or properties file; a config quoted in a script or a manifest extracted to JSON), with its source
// in SOURCES.tsv.
const corpusDir = "../testdata/configs"

// TestPublishedConnectorConfigsAreAccepted validates every published connector config of the corpus as
// PUT /connector-plugins/{class}/config/validate does, with the connector classes' database check off
// (the unchecked test hook: there is no database here). A refused config fails the test unless the
// README's "Published configs cdcd refuses" list names its file with the reason.
func TestPublishedConnectorConfigsAreAccepted(t *testing.T) {
	w := newTestStandalone(t, map[string]string{"bootstrap.servers": "127.0.0.1:1",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets")}, slog.New(slog.DiscardHandler))
	checkCorpus(t, "connectors", func(cfg map[string]string) []string { return corpusRefusals(w, cfg) })
}

// TestPublishedWorkerConfigsAreAccepted parses every published worker config of the corpus as cdcd's
// standalone or distributed command does (distributed when it names a group.id, as connect-distributed's
// files do). A refused one fails the test unless the README's "Published configs cdcd refuses" names it.
func TestPublishedWorkerConfigsAreAccepted(t *testing.T) {
	checkCorpus(t, "workers", func(props map[string]string) []string {
		delete(props, "name") // readCorpusConfig names connectors
		mode := config.Standalone
		if props["group.id"] != "" {
			mode = config.Distributed
		}
		if _, _, err := config.ParseWorker(props, mode); err != nil {
			return []string{err.Error()}
		}
		return nil
	})
}

// checkCorpus runs refusals on every corpus config of kind (connectors, workers) and fails t for each
// refused config the README does not list, each listed one that is accepted, and each file without its
// source; it logs how many are accepted.
func checkCorpus(t *testing.T, kind string, refusals func(map[string]string) []string) {
	files, sources, listed := corpus(t, kind)
	accepted := 0
	for _, file := range files {
		rel := kind + "/" + filepath.Base(file)
		if !sources[rel] {
			t.Errorf("%s has no line in SOURCES.tsv saying where it was published", rel)
		}
		cfg, err := readCorpusConfig(file)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		refused := refusals(cfg)
		reason, isListed := listed[filepath.Base(file)]
		switch {
		case len(refused) == 0 && isListed:
			t.Errorf("%s is accepted, and the README lists it as refused (%s): remove the line", rel, reason)
		case len(refused) == 0:
			accepted++
		case !isListed:
			t.Errorf("%s is refused, and the README's \"Published configs cdcd refuses\" does not list it:\n  %s", rel, strings.Join(refused, "\n  "))
		}
	}
	for name := range listed {
		found, _ := filepath.Glob(filepath.Join(corpusDir, "*", name))
		if len(found) == 0 {
			t.Errorf("the README lists %s as refused, and the corpus has no such file", name)
		}
	}
	t.Logf("%d of %d published %s configs accepted (%.1f %%)", accepted, len(files), strings.TrimSuffix(kind, "s"), 100*float64(accepted)/float64(len(files)))
}

// corpus lists the corpus files of kind (connectors, workers), the files SOURCES.tsv accounts for, and the
// README's list of refused files with their reasons.
func corpus(t *testing.T, kind string) (files []string, sources map[string]bool, listed map[string]string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err = filepath.Glob(filepath.Join(corpusDir, kind, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	return files, corpusSources(t), refusedCorpusEntries(string(readme))
}

// corpusRefusals is what validation refuses of cfg, one line per error.
func corpusRefusals(w *Worker, cfg map[string]string) []string {
	infos, err := w.ValidateConnectorConfig(cfg["connector.class"], cfg)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, c := range infos.Configs {
		for _, e := range c.Value.Errors {
			out = append(out, c.Value.Name+": "+e)
		}
	}
	return out
}

// readCorpusConfig reads a connector config: a JSON object (Connect's {"name", "config"} or the config
// itself; scalars as the text Connect's JSON reading makes of them), or a properties file.
func readCorpusConfig(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	if strings.HasSuffix(file, ".properties") {
		s := bufio.NewScanner(strings.NewReader(string(data)))
		for s.Scan() {
			line := strings.TrimSpace(s.Text())
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				k, v, _ = strings.Cut(line, ":")
			}
			cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	} else {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		if inner, ok := doc["config"].(map[string]any); ok {
			if name, ok := doc["name"].(string); ok {
				inner["name"] = name
			}
			doc = inner
		}
		for k, v := range doc {
			switch v := v.(type) {
			case string:
				cfg[k] = v
			case nil:
			default:
				cfg[k] = fmt.Sprint(v)
			}
		}
	}
	if cfg["name"] == "" {
		cfg["name"] = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return cfg, nil
}

// corpusSources are the files SOURCES.tsv accounts for.
func corpusSources(t *testing.T) map[string]bool {
	data, err := os.ReadFile(filepath.Join(corpusDir, "SOURCES.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(fields) < 4 || fields[1] == "" || fields[2] == "" || fields[3] == "" {
			continue
		}
		out[fields[0]] = true
	}
	return out
}

// refusedCorpusEntries reads the README's list of corpus files cdcd refuses: "- `file`: reason" lines
// between its markers.
func refusedCorpusEntries(readme string) map[string]string {
	_, section, _ := strings.Cut(readme, "<!-- refused-corpus:begin -->")
	section, _, _ = strings.Cut(section, "<!-- refused-corpus:end -->")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- `")
		if !ok {
			continue
		}
		name, reason, _ := strings.Cut(rest, "`")
		out[name] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reason), ":"))
	}
	return out
}
