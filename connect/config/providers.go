package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/regularfile"
)

// Provider class names Connect users write in config.providers.<name>.class.
const (
	EnvVarProviderClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	FileProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	DirectoryProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// Provider looks up values for ${name:path:key} placeholders, as Kafka's
// ConfigProvider.get(path, keys). Keys it does not know are left out of the
// result (the placeholder then stays as written); an error aborts resolution.
type Provider interface {
	Get(path string, keys []string) (map[string]string, error)
}

// Providers maps provider names (the "env" of ${env:KEY}) to providers.
type Providers map[string]Provider

// NewProviders builds the providers a worker config declares, as Kafka's
// AbstractConfig.instantiateConfigProviders: config.providers names them
// (split on ',' without trimming, as Kafka does there), each needs
// config.providers.<name>.class, and config.providers.<name>.param.* are
// its settings. A listed name without a class is skipped, so its
// placeholders stay unresolved; an unsupported class is an error.
// environ supplies the environment for the env provider (os.Environ format).
func NewProviders(worker map[string]string, environ []string) (Providers, error) {
	list := worker["config.providers"]
	providers := Providers{}
	if list == "" {
		return providers, nil
	}
	for _, name := range strings.Split(list, ",") {
		classKey := "config.providers." + name + ".class"
		class, ok := worker[classKey]
		if !ok {
			continue
		}
		params := paramsWithPrefix(worker, "config.providers."+name+".param.")
		p, err := newProvider(classKey, class, params, environ)
		if err != nil {
			return nil, err
		}
		providers[name] = p
	}
	return providers, nil
}

func paramsWithPrefix(cfg map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

func newProvider(classKey, class string, params map[string]string, environ []string) (Provider, error) {
	switch class {
	case EnvVarProviderClass:
		return newEnvProvider(params, environ)
	case FileProviderClass, DirectoryProviderClass:
		allowed, err := parseAllowedPaths(params["allowed.paths"])
		if err != nil {
			return nil, err
		}
		if class == FileProviderClass {
			return &FileProvider{Allowed: allowed}, nil
		}
		return &DirectoryProvider{Allowed: allowed}, nil
	}
	return nil, fmt.Errorf("%w: %w", ErrProvider, &configdef.ConfigError{Name: classKey, Value: class,
		Message: "Could not load config provider class or one of its dependencies (cdcd supports " +
			strings.Join([]string{EnvVarProviderClass, FileProviderClass, DirectoryProviderClass}, ", ") + ")"})
}

// EnvProvider is EnvVarConfigProvider: ${env:NAME} reads an environment
// variable whose name fully matches allowlist.pattern (default ".*").
type EnvProvider struct {
	vars map[string]string
	// restricted is set when allowlist.pattern narrows the variables (see Providers.Unrestricted).
	restricted bool
}

func newEnvProvider(params map[string]string, environ []string) (*EnvProvider, error) {
	pattern := ".*"
	if p, ok := params["allowlist.pattern"]; ok {
		pattern = p
	}
	// The pattern as written first: anchoring can make an unbalanced one valid ("a)|(b").
	_, err := regexp.Compile(pattern)
	var re *regexp.Regexp
	if err == nil {
		re, err = regexp.Compile("^(?:" + pattern + ")$")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: allowlist.pattern: %w", ErrProvider, err)
	}
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if re.MatchString(k) {
			vars[k] = v
		}
	}
	return &EnvProvider{vars: vars, restricted: pattern != ".*"}, nil
}

// Get returns the allowed variables among keys; a path is an error, as in Kafka.
func (p *EnvProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("%w: Path is not supported for EnvVarConfigProvider, invalid value '%s'", ErrProvider, path)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := p.vars[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// FileProvider is FileConfigProvider: ${file:/path/x.properties:key} reads a
// key of a properties file (UTF-8, through a Reader as Kafka does).
type FileProvider struct {
	Allowed []string // nil allows every path
}

// Get reads the file at path and returns the requested keys it defines.
// A path outside allowed.paths yields no data (and a warning), as in Kafka.
func (p *FileProvider) Get(path string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	file, ok := allowedPath(p.Allowed, path)
	if !ok {
		return out, nil
	}
	data, err := readProviderFile(file)
	if err == nil && !utf8.Valid(data) {
		err = fmt.Errorf("malformed UTF-8")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: Could not read properties from file %s: %w", ErrProvider, path, err)
	}
	props, err := ParseProperties(string(data))
	if err != nil {
		return nil, fmt.Errorf("%w: file %s: %w", ErrProvider, path, err)
	}
	m := PropertiesMap(props)
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// DirectoryProvider is DirectoryConfigProvider: ${dir:/run/secrets:pw}
// returns the whole content of the regular file pw in that directory.
type DirectoryProvider struct {
	Allowed []string // nil allows every path
}

// Get returns the content of each requested regular file in the directory.
// A path that is not an allowed directory yields no data, as in Kafka.
func (p *DirectoryProvider) Get(path string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	dir, ok := allowedPath(p.Allowed, path)
	if !ok {
		return out, nil
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		slog.Warn("config provider path is not a directory", "path", path)
		return out, nil
	}
	for _, k := range keys {
		if k == "" || strings.ContainsRune(k, filepath.Separator) {
			continue // Kafka matches file names listed in the directory only
		}
		file := filepath.Join(dir, k)
		if info, err := os.Stat(file); err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := readProviderFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: Could not read file %s for property %s: %w", ErrProvider, file, k, err)
		}
		out[k] = strings.ToValidUTF8(string(data), "\uFFFD")
	}
	return out, nil
}

// MaxProviderFileSize bounds what the file and directory providers read from one file: a properties file
// of secrets or a secret file (a password, a PEM bundle) is a few KiB, and without a bound a placeholder
// naming /dev/zero or a huge file would grow the process until it dies. Kafka reads without a bound.
const MaxProviderFileSize = 1 << 20

// readProviderFile reads a file a placeholder names: a regular file of at most MaxProviderFileSize bytes.
func readProviderFile(path string) ([]byte, error) {
	return regularfile.Read(path, MaxProviderFileSize)
}

// Unrestricted names the providers that read whatever the process can: a file or directory provider
// without allowed.paths, an env provider without allowlist.pattern. Connect allows that, and so does
// cdcd; the worker warns about it at start, since any client of the REST API can then name any file or
// variable in a connector config and have it resolved.
func (ps Providers) Unrestricted() []string {
	var out []string
	for name, p := range ps {
		switch p := p.(type) {
		case *FileProvider:
			if p.Allowed == nil {
				out = append(out, name)
			}
		case *DirectoryProvider:
			if p.Allowed == nil {
				out = append(out, name)
			}
		case *EnvProvider:
			if !p.restricted {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// parseAllowedPaths is Kafka's AllowedPaths: a comma-separated list of
// existing absolute paths, or "" for no restriction.
func parseAllowedPaths(value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(value, ",") {
		clean := javaNormalize(p)
		if !filepath.IsAbs(clean) {
			return nil, fmt.Errorf("%w: Path %s is not absolute", ErrProvider, clean)
		}
		if _, err := os.Stat(clean); err != nil {
			return nil, fmt.Errorf("%w: Path %s does not exist", ErrProvider, clean)
		}
		out = append(out, clean)
	}
	return out, nil
}

// allowedPath is AllowedPaths.parseUntrustedPath: with a restriction, the
// normalised path must lie under one of the allowed paths (whole components).
func allowedPath(allowed []string, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	if allowed == nil {
		return path, true
	}
	clean := javaNormalize(path)
	for _, a := range allowed {
		if clean == a || strings.HasPrefix(clean, strings.TrimSuffix(a, "/")+"/") {
			return clean, true
		}
	}
	slog.Warn("config provider path is not allowed", "path", path)
	return "", false
}

// javaNormalize is Path.normalize for the cases that matter here; an empty
// path stays empty (filepath.Clean would turn it into ".").
func javaNormalize(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// placeholder is ConfigTransformer.DEFAULT_PATTERN; Go's leftmost-first
// matching picks the same groups as Java's backtracking for it.
var placeholder = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Resolved is a configuration after placeholder substitution.
type Resolved struct {
	Values map[string]string
}

// Resolve replaces ${provider:path:key} and ${provider:key} in every value,
// as Kafka's ConfigTransformer: all keys are fetched first, one Get per
// provider and path; a placeholder naming an unknown provider, or a key
// the provider does not have, is left as written.
func (ps Providers) Resolve(cfg map[string]string) (Resolved, error) {
	type pathKey struct{ provider, path string }
	wanted := map[pathKey][]string{}
	for _, v := range cfg {
		for _, m := range placeholder.FindAllStringSubmatch(v, -1) {
			pk := pathKey{m[1], m[3]}
			if !slices.Contains(wanted[pk], m[4]) {
				wanted[pk] = append(wanted[pk], m[4])
			}
		}
	}
	found := map[pathKey]map[string]string{}
	for pk, keys := range wanted {
		p, ok := ps[pk.provider]
		if !ok {
			continue
		}
		data, err := p.Get(pk.path, keys)
		if err != nil {
			return Resolved{}, err
		}
		found[pk] = data
	}
	res := Resolved{Values: make(map[string]string, len(cfg))}
	for k, v := range cfg {
		res.Values[k] = placeholder.ReplaceAllStringFunc(v, func(match string) string {
			m := placeholder.FindStringSubmatch(match)
			if val, ok := found[pathKey{m[1], m[3]}][m[4]]; ok {
				return val
			}
			return match
		})
	}
	return res, nil
}
