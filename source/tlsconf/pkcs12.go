package tlsconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// This file reads PKCS #12 keystores as today's keytool and OpenSSL write them: bags encrypted with
// PBES2 (PBKDF2 and AES-CBC), or not encrypted. The legacy PKCS #12 encryption schemes (3DES, RC2) of
// older tools are refused with advice. The MAC is not checked: a wrong password shows as a key or
// certificate that does not decrypt.

var (
	oidData              = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncryptedData     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidKeyBag            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 1}
	oidShroudedKeyBag    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidCertBag           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidX509Certificate   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}
	oidPBES2             = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA1      = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA256    = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACWithSHA512    = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC         = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC         = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC         = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	errLegacyPKCS12      = errors.New("the PKCS12 store uses a legacy encryption (3DES or RC2); re-create it with a current keytool or `openssl pkcs12 -export` (AES), or use JKS or PEM")
	errPKCS12BadPassword = errors.New("the PKCS12 store does not decrypt: wrong password, or a damaged store")
)

// maxPBKDF2Iterations is the JDK's bound on a PKCS12 store's iteration counts (PKCS12KeyStore's
// MAX_ITERATION_COUNT), applied to every PBES2 decryption here.
const maxPBKDF2Iterations = 5_000_000

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
}

type pfx struct {
	Version  int
	AuthSafe contentInfo
	MacData  asn1.RawValue `asn1:"optional"`
}

type encryptedData struct {
	Version int
	Info    struct {
		ContentType asn1.ObjectIdentifier
		Algorithm   algorithmIdentifier
		Content     []byte `asn1:"tag:0,optional"`
	}
}

type safeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue `asn1:"tag:0,explicit"`
	Attributes asn1.RawValue `asn1:"optional"`
}

// pbes2Params are PBES2's parameters (RFC 8018): the key derivation and the cipher with its IV.
type pbes2Params struct {
	KDF    algorithmIdentifier
	Scheme struct {
		Algorithm asn1.ObjectIdentifier
		IV        []byte
	}
}

// pbkdf2Params are PBKDF2's parameters (RFC 8018).
type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                 `asn1:"optional"`
	PRF        algorithmIdentifier `asn1:"optional"`
}

type encryptedPrivateKeyInfo struct {
	Algorithm algorithmIdentifier
	Data      []byte
}

// readPKCS12 returns a store's entries: its private keys (with every certificate of the store as the
// chain, leaf first as keytool writes it) or, when it holds no key, its certificates. The store's
// contents decrypt with password, its keys with keyPassword ("": password).
func readPKCS12(data []byte, password, keyPassword string) ([]storeEntry, error) {
	if keyPassword == "" {
		keyPassword = password
	}
	var p pfx
	if _, err := asn1.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a PKCS12 store: %w", err)
	}
	var safes []contentInfo
	if err := unmarshalData(p.AuthSafe, &safes); err != nil {
		return nil, err
	}
	var keys, certs [][]byte
	for _, ci := range safes {
		var contents []byte
		switch {
		case ci.ContentType.Equal(oidData):
			if err := unmarshalData(ci, &contents); err != nil {
				return nil, err
			}
		case ci.ContentType.Equal(oidEncryptedData):
			var ed encryptedData
			if _, err := asn1.Unmarshal(ci.Content.Bytes, &ed); err != nil {
				return nil, fmt.Errorf("PKCS12 encrypted data: %w", err)
			}
			var err error
			if contents, err = pbes2Decrypt(ed.Info.Algorithm, ed.Info.Content, password); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("PKCS12 content type %v is not supported", ci.ContentType)
		}
		var bags []safeBag
		if _, err := asn1.Unmarshal(contents, &bags); err != nil {
			return nil, errPKCS12BadPassword
		}
		for _, bag := range bags {
			switch {
			case bag.ID.Equal(oidKeyBag):
				keys = append(keys, bag.Value.Bytes)
			case bag.ID.Equal(oidShroudedKeyBag):
				var info encryptedPrivateKeyInfo
				if _, err := asn1.Unmarshal(bag.Value.Bytes, &info); err != nil {
					return nil, fmt.Errorf("PKCS12 key: %w", err)
				}
				key, err := pbes2Decrypt(info.Algorithm, info.Data, keyPassword)
				if err != nil {
					return nil, err
				}
				keys = append(keys, key)
			case bag.ID.Equal(oidCertBag):
				var cb struct {
					ID    asn1.ObjectIdentifier
					Value []byte `asn1:"tag:0,explicit"`
				}
				if _, err := asn1.Unmarshal(bag.Value.Bytes, &cb); err != nil {
					return nil, fmt.Errorf("PKCS12 certificate: %w", err)
				}
				if cb.ID.Equal(oidX509Certificate) {
					certs = append(certs, cb.Value)
				}
			}
		}
	}
	if len(keys) == 0 {
		out := make([]storeEntry, len(certs))
		for i, c := range certs {
			out[i] = storeEntry{certs: [][]byte{c}}
		}
		return out, nil
	}
	out := make([]storeEntry, len(keys))
	for i, k := range keys {
		out[i] = storeEntry{key: k, certs: certs}
	}
	return out, nil
}

// unmarshalData decodes the OCTET STRING of a data ContentInfo into v.
func unmarshalData(ci contentInfo, v any) error {
	if !ci.ContentType.Equal(oidData) {
		return fmt.Errorf("PKCS12 content type %v is not supported", ci.ContentType)
	}
	var octets []byte
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &octets); err != nil {
		return fmt.Errorf("PKCS12 data: %w", err)
	}
	if b, ok := v.(*[]byte); ok {
		*b = octets
		return nil
	}
	if _, err := asn1.Unmarshal(octets, v); err != nil {
		return fmt.Errorf("PKCS12 data: %w", err)
	}
	return nil
}

// pbes2Decrypt decrypts PBES2 (RFC 8018) content: PBKDF2 with HMAC-SHA1/256/512, then AES-CBC.
func pbes2Decrypt(alg algorithmIdentifier, data []byte, password string) ([]byte, error) {
	if !alg.Algorithm.Equal(oidPBES2) {
		return nil, errLegacyPKCS12
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(alg.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %w", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("PBES2 key derivation %v is not supported", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %w", err)
	}
	// The count is the store's: without a bound, one crafted store costs minutes of CPU per validation.
	if kdf.Iterations < 1 || kdf.Iterations > maxPBKDF2Iterations {
		return nil, fmt.Errorf("PBKDF2 iteration count %d is outside 1..%d, what Java's keystores accept; "+
			"re-create the store or key with a smaller count (keytool and OpenSSL write 10000 or fewer)", kdf.Iterations, maxPBKDF2Iterations)
	}
	var prf func() hash.Hash
	switch {
	case kdf.PRF.Algorithm == nil || kdf.PRF.Algorithm.Equal(oidHMACWithSHA1):
		prf = sha1.New
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA256):
		prf = sha256.New
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 function %v is not supported", kdf.PRF.Algorithm)
	}
	var keyLen int
	switch {
	case params.Scheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case params.Scheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case params.Scheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("PBES2 cipher %v is not supported", params.Scheme.Algorithm)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("PBKDF2: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(params.Scheme.IV) != aes.BlockSize || len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, errors.New("PBES2: malformed encrypted content")
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, params.Scheme.IV).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, errPKCS12BadPassword
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errPKCS12BadPassword
		}
	}
	return out[:len(out)-pad], nil
}
