package pass

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// Load reads the current signing key from currentPEMPath and, when
// previousPEMPath is not empty, the previous one (kept for verification
// during a rotation). Each file is a PKCS#8 "PRIVATE KEY" PEM holding an
// Ed25519 key, as `openssl genpkey -algorithm ed25519` writes it; the
// previous key may also be given as its "PUBLIC KEY" PEM
// (`openssl pkey -pubout`). Errors name the file and what is wrong with it.
func Load(currentPEMPath, previousPEMPath string) (*Keys, error) {
	cur, err := loadPrivate(currentPEMPath)
	if err != nil {
		return nil, err
	}
	var prev ed25519.PublicKey
	if previousPEMPath != "" {
		if prev, err = loadPublic(previousPEMPath); err != nil {
			return nil, err
		}
	}
	return newKeys(cur, prev)
}

// readPEM reads path and decodes its first PEM block.
func readPEM(path string) (*pem.Block, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pass: load %s: %w", path, err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("pass: load %s: not a PEM file (want a PKCS#8 Ed25519 key: openssl genpkey -algorithm ed25519 -out %s)", path, path)
	}
	switch block.Type {
	case "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("pass: load %s: the key is encrypted; write it without a passphrase (openssl pkey -in %s -out plain.pem)", path, path)
	case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY":
		return nil, fmt.Errorf("pass: load %s: %s is not an Ed25519 key (openssl genpkey -algorithm ed25519)", path, block.Type)
	}
	if _, encrypted := block.Headers["Proc-Type"]; encrypted {
		return nil, fmt.Errorf("pass: load %s: the key is encrypted; write it without a passphrase", path)
	}
	return block, nil
}

func loadPrivate(path string) (ed25519.PrivateKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("pass: load %s: PEM block %q, want \"PRIVATE KEY\" (PKCS#8 Ed25519)", path, block.Type)
	}
	return parsePrivate(path, block.Bytes)
}

func parsePrivate(path string, der []byte) (ed25519.PrivateKey, error) {
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("pass: load %s: parse PKCS#8: %w", path, err)
	}
	ed, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pass: load %s: %s key, want Ed25519 (openssl genpkey -algorithm ed25519)", path, keyKind(key))
	}
	return ed, nil
}

// loadPublic reads the public half of a previous key, from its private or
// public PEM.
func loadPublic(path string) (ed25519.PublicKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	switch block.Type {
	case "PRIVATE KEY":
		priv, err := parsePrivate(path, block.Bytes)
		if err != nil {
			return nil, err
		}
		return priv.Public().(ed25519.PublicKey), nil
	case "PUBLIC KEY":
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pass: load %s: parse public key: %w", path, err)
		}
		ed, ok := key.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("pass: load %s: %s key, want Ed25519", path, keyKind(key))
		}
		return ed, nil
	}
	return nil, fmt.Errorf("pass: load %s: PEM block %q, want \"PRIVATE KEY\" or \"PUBLIC KEY\"", path, block.Type)
}

// keyKind names a parsed key's algorithm for error messages.
func keyKind(key any) string {
	switch key.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PrivateKey, *ecdsa.PublicKey:
		return "EC"
	case *ecdh.PrivateKey, *ecdh.PublicKey:
		return "X25519/ECDH"
	}
	return fmt.Sprintf("%T", key)
}
