package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"strings"
	"testing"
)

// TestConnectorFilesMatchConnect replays ConnectStandalone's own parsing of
// the files in testdata/connectorfiles.
func TestConnectorFilesMatchConnect(t *testing.T) {
	for _, line := range readLines(t, "testdata/connector_files.jsonl") {
		var v struct {
			File, Name, Error string
			Config            map[string]string
			InitialState      string `json:"initial_state"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		got, err := LoadConnectorFile(v.File)
		if v.Error != "" {
			if err == nil || !strings.Contains(err.Error(), v.Error) || !errors.Is(err, ErrConnectorFile) {
				t.Errorf("%s: got (%+v, %v), want error %q", v.File, got, err, v.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", v.File, err)
			continue
		}
		if got.Name != v.Name || got.InitialState != v.InitialState || !maps.Equal(got.Config, v.Config) {
			t.Errorf("%s: got %+v, want name=%q state=%q config=%q", v.File, got, v.Name, v.InitialState, v.Config)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}
