package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", `{"topic":"t","partition":0,"offset":0,"key":null,"value":"{\"op\":\"c\",\"after\":{\"x\":1},\"ts_ms\":1}","headers":[],"timestamp":0}`+"\n")
	sameButTime := writeFile(t, dir, "b.jsonl", `{"topic":"t","partition":0,"offset":0,"key":null,"value":"{\"op\":\"c\",\"after\":{\"x\":1},\"ts_ms\":2}","headers":[],"timestamp":5}`+"\n")
	other := writeFile(t, dir, "c.jsonl", `{"topic":"t","partition":0,"offset":0,"key":null,"value":"{\"op\":\"c\",\"after\":{\"x\":2},\"ts_ms\":1}","headers":[],"timestamp":0}`+"\n")
	offsetsA := writeFile(t, dir, "oa.json", `[{"key":"k","value":"{\"lsn\":1,\"messageType\":\"INSERT\"}"}]`)
	offsetsB := writeFile(t, dir, "ob.json", `[{"key":"k","value":"{\"lsn\":2,\"messageType\":\"INSERT\"}"}]`)

	cases := []struct {
		args       []string
		code       int
		wantStdout string
	}{
		{[]string{"-mode", "same-db", a, sameButTime}, 0, ""},
		{[]string{"-mode", "same-db", a, other}, 1, "t#0 value.after.x: 1 != 2\n"},
		{[]string{"-mode", "replay", "-offsets", offsetsA, offsetsB}, 0, ""},
		{[]string{"-mode", "same-db", "-offsets", offsetsA, offsetsB}, 1, "connect-offsets#0 value.lsn: 1 != 2\n"},
		{[]string{"-mode", "bogus", a, a}, 2, ""},
		{[]string{a}, 2, ""},
		{[]string{a, filepath.Join(dir, "missing")}, 2, ""},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		if tc.wantStdout != "" && !strings.HasPrefix(stdout.String(), tc.wantStdout) {
			t.Errorf("%v: stdout %q, want it to start with %q", tc.args, stdout.String(), tc.wantStdout)
		}
	}
}
