package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ConnectorFile is one connector given on the command line, as
// connect-standalone's CreateConnectorRequest.
type ConnectorFile struct {
	Name   string
	Config map[string]string
	// InitialState is "", RUNNING, PAUSED or STOPPED (KIP-980), upper-cased.
	InitialState string
}

// LoadConnectorFile reads a connector file the way ConnectStandalone does,
// trying in order:
//  1. a JSON object of string values (the flat config; it must hold "name");
//  2. a JSON object {"name":…, "config":{…}, "initial_state":…}; a "name"
//     inside config must match, and is filled in when absent;
//  3. a Java .properties file (it must hold "name").
//
// Like Jackson, JSON numbers and booleans are taken as their text, and
// anything after the first JSON value is ignored.
func LoadConnectorFile(path string) (ConnectorFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ConnectorFile{}, fmt.Errorf("read connector file: %w", err)
	}
	return ParseConnectorFile(path, data)
}

// ParseConnectorFile is LoadConnectorFile on content already read; path is
// used in messages only.
func ParseConnectorFile(path string, data []byte) (ConnectorFile, error) {
	if flat, ok := decodeStringMap(data); ok {
		return requireName(path, flat)
	}
	if req, ok, err := decodeCreateRequest(path, data); ok || err != nil {
		return req, err
	}
	props, err := ParseProperties(DecodeLatin1(data))
	if err != nil {
		return ConnectorFile{}, fmt.Errorf("%w: %s: %w", ErrConnectorFile, path, err)
	}
	return requireName(path, PropertiesMap(props))
}

func requireName(path string, cfg map[string]string) (ConnectorFile, error) {
	name, ok := cfg["name"]
	if !ok {
		return ConnectorFile{}, fmt.Errorf("%w: Connector configuration at '%s' is missing the mandatory 'name' configuration", ErrConnectorFile, path)
	}
	return ConnectorFile{Name: name, Config: cfg}, nil
}

// decodeStringMap accepts a JSON object whose values are all scalars, which
// Jackson coerces into Map<String,String>. A null value is refused here,
// since cdcd's configs cannot hold null (Connect would fail later on it).
func decodeStringMap(data []byte) (map[string]string, bool) {
	var raw map[string]json.RawMessage
	if !decodeFirst(data, &raw) || raw == nil {
		return nil, false
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, ok := scalarText(v)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

func decodeCreateRequest(path string, data []byte) (ConnectorFile, bool, error) {
	var req struct {
		Name         json.RawMessage            `json:"name"`
		Config       map[string]json.RawMessage `json:"config"`
		InitialState json.RawMessage            `json:"initial_state"`
	}
	if !decodeFirst(data, &req) {
		return ConnectorFile{}, false, nil
	}
	name, nameOK := scalarText(req.Name)
	state, stateOK := scalarText(req.InitialState)
	if (req.Name != nil && !nameOK) || (req.InitialState != nil && !stateOK) {
		return ConnectorFile{}, false, nil
	}
	cfg := make(map[string]string, len(req.Config)+1)
	for k, v := range req.Config {
		s, ok := scalarText(v)
		if !ok {
			return ConnectorFile{}, false, nil
		}
		cfg[k] = s
	}
	state = strings.ToUpper(state)
	switch state {
	case "", "RUNNING", "PAUSED", "STOPPED":
	default:
		return ConnectorFile{}, false, nil
	}
	if req.Name == nil || req.Config == nil {
		// Connect would go on with a null name or config and fail later;
		// say what is missing now.
		return ConnectorFile{}, false, fmt.Errorf("%w: Connector configuration at '%s' is missing the mandatory 'name' or 'config'", ErrConnectorFile, path)
	}
	if inner, ok := cfg["name"]; ok {
		if inner != name {
			return ConnectorFile{}, false, fmt.Errorf("%w: Connector name configuration in 'config' doesn't match the one specified in 'name' at '%s'", ErrConnectorFile, path)
		}
	} else {
		cfg["name"] = name
	}
	return ConnectorFile{Name: name, Config: cfg, InitialState: state}, true, nil
}

// decodeFirst decodes the first JSON value of data, ignoring what follows,
// as Jackson's ObjectMapper.readValue does by default.
func decodeFirst(data []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v) == nil
}

// scalarText renders a JSON string, number or boolean as Jackson's
// StringDeserializer does: strings unquoted, numbers and booleans as written.
func scalarText(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}
