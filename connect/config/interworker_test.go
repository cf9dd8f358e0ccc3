package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func distributedProps() map[string]string {
	props := standaloneProps()
	delete(props, "offset.storage.file.filename")
	props["group.id"], props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"] = "g", "c", "o", "s"
	return props
}

// TestInterWorkerKeys: the inter.worker.* keys take Connect's defaults and are validated as
// DistributedConfig validates them: an unknown algorithm names the key and the algorithms available, the
// signature algorithm must be one of the verification algorithms, and the key size must suit the
// generation algorithm.
func TestInterWorkerKeys(t *testing.T) {
	w, _, err := ParseWorker(distributedProps(), Distributed)
	if err != nil {
		t.Fatal(err)
	}
	want := InterWorker{KeyAlgorithm: "HmacSHA256", KeySize: 32, KeyTTL: time.Hour, SignatureAlgorithm: "HmacSHA256", VerificationAlgorithms: []string{"HmacSHA256"}}
	if got := w.InterWorker; got.KeyAlgorithm != want.KeyAlgorithm || got.KeySize != want.KeySize || got.KeyTTL != want.KeyTTL ||
		got.SignatureAlgorithm != want.SignatureAlgorithm || !slices.Equal(got.VerificationAlgorithms, want.VerificationAlgorithms) {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}

	cases := []struct {
		set  map[string]string
		want string // "" accepted
	}{
		{map[string]string{"inter.worker.key.generation.algorithm": "HmacSHA512", "inter.worker.key.size": "1024", "inter.worker.key.ttl.ms": "60000",
			"inter.worker.signature.algorithm": "HmacSHA384", "inter.worker.verification.algorithms": "HmacSHA256,HmacSHA384"}, ""},
		{map[string]string{"inter.worker.key.generation.algorithm": "AES"},
			"Invalid value AES for configuration inter.worker.key.generation.algorithm: the algorithm is not supported by cdcd; the supported algorithms are: HmacMD5, HmacSHA1,"},
		{map[string]string{"inter.worker.signature.algorithm": "SHA256"},
			"Invalid value SHA256 for configuration inter.worker.signature.algorithm: the algorithm is not supported by cdcd"},
		{map[string]string{"inter.worker.verification.algorithms": "HmacSHA256,HmacNope"},
			"Invalid value HmacNope for configuration inter.worker.verification.algorithms: the algorithm is not supported by cdcd"},
		{map[string]string{"inter.worker.verification.algorithms": ""},
			"inter.worker.verification.algorithms: At least one signature verification algorithm must be provided"},
		{map[string]string{"inter.worker.verification.algorithms": "HmacSHA512"},
			"Invalid value HmacSHA256 for configuration inter.worker.signature.algorithm: Signature algorithm must be present in inter.worker.verification.algorithms list"},
		{map[string]string{"inter.worker.key.size": "16"},
			"Unable to create key generator with algorithm HmacSHA256 and key size 16: Key length must be at least 40 bits"},
		{map[string]string{"inter.worker.key.ttl.ms": "-1"}, "inter.worker.key.ttl.ms"},
	}
	for _, tc := range cases {
		props := distributedProps()
		for k, v := range tc.set {
			props[k] = v
		}
		w, _, err := ParseWorker(props, Distributed)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.set, err)
		case tc.want == "" && (w.InterWorker.KeySize != 128 || w.InterWorker.KeyTTL != time.Minute || w.InterWorker.SignatureAlgorithm != "HmacSHA384"):
			t.Errorf("%v: %+v", tc.set, w.InterWorker)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.set, err, tc.want)
		}
	}
}
