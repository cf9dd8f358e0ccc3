package configdef

import (
	"cmp"
	"strconv"
	"strings"
)

// ConfigInfos is the body of PUT /connector-plugins/{plugin}/config/validate.
// Field order matches Connect's Jackson output.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ConfigInfo pairs a definition with its validated value.
type ConfigInfo struct {
	Definition *ConfigKeyInfo   `json:"definition"`
	Value      *ConfigValueInfo `json:"value"`
}

// ConfigKeyInfo is Connect's rendering of a Key. Kafka 4.4 serialises its
// record components in declaration order, with the group order as
// "order_in_group" (older Kafka wrote "order", last).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is Connect's rendering of a validated value.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// NewConfigInfos builds the validate response for a connector class from its
// definitions and a Validate result, as AbstractHerder.generateResult does:
// one entry per definition in order, groups in order of first use.
func NewConfigInfos(connectorClass string, defs []Key, res Result) ConfigInfos {
	infos := ConfigInfos{Name: connectorClass, Groups: []string{}, Configs: []ConfigInfo{}}
	defined := make(map[string]bool, len(defs))
	for _, k := range defs {
		defined[k.Name] = true
		if k.Group != "" && !contains(infos.Groups, k.Group) {
			infos.Groups = append(infos.Groups, k.Group)
		}
	}
	// Values without a definition (undefined dependents) come first, as in
	// generateResult.
	for _, v := range res.Values {
		if !defined[v.Name] {
			infos.Configs = append(infos.Configs, ConfigInfo{Value: valueInfo(v, nil)})
		}
	}
	for _, k := range defs {
		info := ConfigInfo{Definition: keyInfo(k)}
		if v, ok := res.Value(k.Name); ok {
			info.Value = valueInfo(v, &k)
		}
		infos.Configs = append(infos.Configs, info)
	}
	infos.ErrorCount = res.ErrorCount()
	return infos
}

func keyInfo(k Key) *ConfigKeyInfo {
	info := &ConfigKeyInfo{
		Name:          k.Name,
		Type:          k.Type.String(),
		Required:      k.Required,
		Importance:    k.Importance.String(),
		Documentation: k.Doc,
		Group:         nullable(k.Group),
		Width:         k.Width.String(),
		DisplayName:   cmp.Or(k.DisplayName, k.Name), // Kafka's short define() uses the name
		Dependents:    append([]string{}, k.Dependents...),
		OrderInGroup:  k.OrderInGroup,
	}
	if !k.Required && k.Default != nil {
		if parsed, err := ParseValue(k.Name, *k.Default, k.Type); err == nil {
			if s, ok := FormatValue(parsed); ok {
				info.DefaultValue = &s
			}
		}
	}
	return info
}

func valueInfo(v Value, k *Key) *ConfigValueInfo {
	info := &ConfigValueInfo{Name: v.Name, RecommendedValues: []string{}, Errors: append([]string{}, v.Errors...), Visible: true}
	if s, ok := FormatValue(v.Parsed); ok {
		info.Value = &s
	}
	if k != nil {
		info.RecommendedValues = append(info.RecommendedValues, k.Recommended...)
	}
	// Kafka marks a value with no definition (an undefined dependent) invisible.
	info.Visible = k != nil
	return info
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// InvalidConfigMessage is the message of the 400 Connect returns when a
// connector is created or updated with errors (AbstractHerder.maybeAddConfigErrors).
func InvalidConfigMessage(infos ConfigInfos) string {
	var b strings.Builder
	b.WriteString("Connector configuration is invalid and contains the following ")
	b.WriteString(strconv.Itoa(infos.ErrorCount))
	b.WriteString(" error(s):")
	for _, c := range infos.Configs {
		if c.Value == nil {
			continue
		}
		for _, msg := range c.Value.Errors {
			b.WriteString("\n")
			b.WriteString(msg)
		}
	}
	b.WriteString("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return b.String()
}
