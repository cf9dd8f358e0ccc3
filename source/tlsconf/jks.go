package tlsconf

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
)

// This file reads Java's JKS keystores (keytool -storetype JKS, the default ssl.keystore.type of Kafka
// and Connect): private keys with their certificate chains, and trusted certificates.

// storeEntry is one entry of a keystore (JKS or PKCS12): a private key (PKCS #8 DER) with its chain, or
// a trusted certificate.
type storeEntry struct {
	alias string
	key   []byte   // decrypted PKCS #8; nil for a trusted certificate
	certs [][]byte // DER, leaf first
}

const (
	jksMagic       = 0xFEEDFEED
	jksPrivateKey  = 1
	jksTrustedCert = 2
)

// jksKeyProtectorOID is Sun's proprietary key protection algorithm (KeyProtector).
var jksKeyProtectorOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 42, 2, 17, 1, 1}

// readJKS parses a keystore, checking its integrity with storePassword (not at all when it is empty, as
// Java reads a truststore without a password), and decrypts private keys with keyPassword.
func readJKS(data []byte, storePassword, keyPassword string) ([]storeEntry, error) {
	if len(data) < 20+12 {
		return nil, errors.New("not a JKS keystore: too short")
	}
	if binary.BigEndian.Uint32(data) != jksMagic {
		return nil, errors.New("not a JKS keystore (set the store's type, ssl.keystore.type or ssl.truststore.type, for another type)")
	}
	body, digest := data[:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	h := sha1.New()
	h.Write(javaPasswordBytes(storePassword))
	h.Write([]byte("Mighty Aphrodite"))
	h.Write(body)
	if storePassword != "" && subtle.ConstantTimeCompare(h.Sum(nil), digest) != 1 {
		return nil, errors.New("keystore password was incorrect, or the keystore is damaged")
	}
	r := &jksReader{r: bytes.NewReader(body[4:])}
	if version := r.u32(); version != 2 && r.err == nil {
		return nil, fmt.Errorf("JKS keystore version %d is not supported", version)
	}
	count := r.u32()
	var entries []storeEntry
	for i := uint32(0); i < count && r.err == nil; i++ {
		tag, alias := r.u32(), r.utf()
		r.bytes(8) // creation date
		e := storeEntry{alias: alias}
		switch tag {
		case jksPrivateKey:
			protected := r.bytes(int(r.u32()))
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.utf() // certificate type, X.509
				e.certs = append(e.certs, r.bytes(int(r.u32())))
			}
			if r.err == nil {
				key, err := recoverJKSKey(protected, keyPassword)
				if err != nil {
					return nil, fmt.Errorf("key %q: %w", alias, err)
				}
				e.key = key
			}
		case jksTrustedCert:
			r.utf()
			e.certs = [][]byte{r.bytes(int(r.u32()))}
		default:
			return nil, fmt.Errorf("keystore entry %q has unknown type %d", alias, tag)
		}
		entries = append(entries, e)
	}
	if r.err != nil {
		return nil, fmt.Errorf("reading the JKS keystore: %w", r.err)
	}
	return entries, nil
}

// recoverJKSKey undoes KeyProtector: the key is XORed with a SHA-1 key stream seeded by a salt, and
// followed by a SHA-1 of password and key that proves the password right.
func recoverJKSKey(der []byte, password string) ([]byte, error) {
	var info struct {
		Algo struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue `asn1:"optional"`
		}
		Data []byte
	}
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("protected key: %w", err)
	}
	if !info.Algo.Algorithm.Equal(jksKeyProtectorOID) {
		return nil, fmt.Errorf("key protection algorithm %v is not supported", info.Algo.Algorithm)
	}
	data := info.Data
	if len(data) < 2*sha1.Size {
		return nil, errors.New("protected key too short")
	}
	salt, encrypted, check := data[:sha1.Size], data[sha1.Size:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	pw := javaPasswordBytes(password)
	key := make([]byte, len(encrypted))
	block := salt
	for off := 0; off < len(encrypted); off += sha1.Size {
		sum := sha1.Sum(append(append([]byte{}, pw...), block...))
		block = sum[:]
		for i := 0; i < sha1.Size && off+i < len(encrypted); i++ {
			key[off+i] = encrypted[off+i] ^ block[i]
		}
	}
	sum := sha1.Sum(append(append([]byte{}, pw...), key...))
	if subtle.ConstantTimeCompare(sum[:], check) != 1 {
		return nil, errors.New("the key password (ssl.key.password) is incorrect")
	}
	return key, nil
}

// javaPasswordBytes is a password as Java's keystores hash it: UTF-16 big-endian.
func javaPasswordBytes(password string) []byte {
	units := utf16.Encode([]rune(password))
	out := make([]byte, 2*len(units))
	for i, u := range units {
		binary.BigEndian.PutUint16(out[2*i:], u)
	}
	return out
}

// jksReader reads DataInputStream's encodings, remembering the first error.
type jksReader struct {
	r   io.Reader
	err error
}

func (r *jksReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > 1<<24 {
		r.err = fmt.Errorf("implausible length %d", n)
		return nil
	}
	b := make([]byte, n)
	_, r.err = io.ReadFull(r.r, b)
	return b
}

func (r *jksReader) u32() uint32 {
	b := r.bytes(4)
	if r.err != nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

// utf reads writeUTF's string; aliases and certificate types are ASCII in practice.
func (r *jksReader) utf() string {
	b := r.bytes(2)
	if r.err != nil {
		return ""
	}
	return string(r.bytes(int(binary.BigEndian.Uint16(b))))
}
