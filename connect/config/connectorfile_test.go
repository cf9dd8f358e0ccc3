package config

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestConnectorFilesMatchConnect replays ConnectStandalone's own parsing of
// the files in testdata/connectorfiles.
func TestConnectorFilesMatchConnect(t *testing.T) {
	for _, line := range testenv.JSONLines(t, "testdata/connector_files.jsonl") {
		var v struct {
			File, Name, Error string
			Config            map[string]string
			InitialState      string `json:"initial_state"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
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
