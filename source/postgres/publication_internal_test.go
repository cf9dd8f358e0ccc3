package postgres

import "testing"

// TestPublicationNamesArg: the option is one string literal holding one quoted identifier, whatever the
// name holds; TestPublicationNameIsQuotedInStartReplication proves it against the server.
func TestPublicationNamesArg(t *testing.T) {
	for name, want := range map[string]string{
		"dbz_publication":     `publication_names '"dbz_publication"'`,
		"MixedCase":           `publication_names '"MixedCase"'`,
		`it's, "Odd"`:         `publication_names '"it''s, ""Odd"""'`,
		`p', messages 'false`: `publication_names '"p'', messages ''false"'`,
	} {
		if got := publicationNamesArg(name); got != want {
			t.Errorf("%q: got %s, want %s", name, got, want)
		}
	}
}
