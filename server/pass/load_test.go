package pass

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustLoad(t *testing.T, cur, prev string) *Keys {
	t.Helper()
	if prev != "" {
		prev = filepath.Join("testdata", prev)
	}
	k, err := Load(filepath.Join("testdata", cur), prev)
	if err != nil {
		t.Fatalf("Load(%s, %s): %v", cur, prev, err)
	}
	return k
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	pkcs1 := filepath.Join(dir, "pkcs1.pem")
	if err := os.WriteFile(pkcs1, []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, cur, prev string
		want            []string // substrings of the error
	}{
		{"missing file", "testdata/nope.pem", "", []string{"testdata/nope.pem", "no such file"}},
		{"not PEM", "testdata/garbage.txt", "", []string{"testdata/garbage.txt", "not a PEM file"}},
		{"RSA PKCS#8", "testdata/rsa.pem", "", []string{"testdata/rsa.pem", "RSA key, want Ed25519"}},
		{"EC PKCS#8", "testdata/ec.pem", "", []string{"testdata/ec.pem", "EC key, want Ed25519"}},
		{"RSA PKCS#1", pkcs1, "", []string{pkcs1, "RSA PRIVATE KEY is not an Ed25519 key"}},
		{"encrypted", "testdata/encrypted.pem", "", []string{"testdata/encrypted.pem", "encrypted"}},
		{"public key as current", "testdata/previous.pub.pem", "", []string{"previous.pub.pem", `"PUBLIC KEY"`}},
		{"bad previous", "testdata/current.pem", "testdata/rsa.pem", []string{"testdata/rsa.pem", "RSA key"}},
		{"missing previous", "testdata/current.pem", "testdata/gone.pem", []string{"testdata/gone.pem"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := Load(c.cur, c.prev)
			if err == nil {
				t.Fatalf("Load = %v, want an error", k)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func mustPriv(t *testing.T, path string) ed25519.PrivateKey {
	t.Helper()
	p, err := loadPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
