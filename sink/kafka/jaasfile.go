package kafka

import "fmt"

// LoginModule is one login module of a JAAS login configuration: its class, control flag (REQUIRED,
// REQUISITE, SUFFICIENT or OPTIONAL) and options.
type LoginModule struct {
	Class   string
	Flag    string
	Options map[string]string
}

// JAASFileEntry reads a JAAS login configuration file, as -Djava.security.auth.login.config names one, and
// returns the login modules of its entry app (`app { <module> <flag> <option>=<value>…; … };`), with the
// tokens of sasl.jaas.config (parseJAAS). An entry named twice, or none named app, is an error.
func JAASFileEntry(text, app string) ([]LoginModule, error) {
	tz := &jaasTokenizer{s: text}
	var found []LoginModule
	seen := false
	for {
		tok, err := tz.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		if tok.kind != tokWord && tok.kind != tokString {
			return nil, fmt.Errorf("expected the name of a login configuration entry, found %q", tok.text)
		}
		name := tok.text
		modules, err := jaasFileModules(tz, name)
		if err != nil {
			return nil, err
		}
		if name != app {
			continue
		}
		if seen {
			return nil, fmt.Errorf("the login configuration entry %s appears twice", app)
		}
		seen, found = true, modules
	}
	if !seen {
		return nil, fmt.Errorf("no login configuration entry named %s", app)
	}
	return found, nil
}

// jaasFileModules reads an entry's `{ module…; } ;` after its name.
func jaasFileModules(tz *jaasTokenizer, name string) ([]LoginModule, error) {
	if tok, err := tz.next(); err != nil {
		return nil, err
	} else if tok.kind != tokOrdinary || tok.text != "{" {
		return nil, fmt.Errorf("entry %s: expected '{' after its name", name)
	}
	var modules []LoginModule
	for {
		tok, err := tz.next()
		if err != nil {
			return nil, err
		}
		switch {
		case tok.kind == tokEOF:
			return nil, fmt.Errorf("entry %s: not closed by '};'", name)
		case tok.kind == tokOrdinary && tok.text == "}":
			if end, err := tz.next(); err != nil {
				return nil, err
			} else if end.kind != tokOrdinary || end.text != ";" {
				return nil, fmt.Errorf("entry %s: expected ';' after its closing '}'", name)
			}
			if len(modules) == 0 {
				return nil, fmt.Errorf("entry %s: no login module", name)
			}
			return modules, nil
		}
		e, err := parseJAASEntry(tz, tok)
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		modules = append(modules, LoginModule{Class: e.module, Flag: e.flag, Options: e.options})
	}
}
