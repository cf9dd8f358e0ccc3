package javacompat

import "testing"

func TestTrimIsStringTrim(t *testing.T) {
	for s, want := range map[string]string{"\x01 a b \t": "a b", "\u00a0x\u3000": "\u00a0x\u3000", "": "", " \x00\x1f ": ""} {
		if got := Trim(s); got != want {
			t.Errorf("Trim(%q) = %q, want %q", s, got, want)
		}
		if got := TrimIsEmpty(s); got != (want == "") {
			t.Errorf("TrimIsEmpty(%q) = %v", s, got)
		}
	}
	if TrimIsEmpty("\u2003") || TrimIsEmpty("\xff") {
		t.Error("only characters up to U+0020 are blank to trim")
	}
}
