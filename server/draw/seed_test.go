package draw

import (
	"bytes"
	"errors"
	"testing"
)

func TestSeeder(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, NonceLen)
	old, err := NewSeeder("ns", []byte("the old secret 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := old.Seed("demo", nonce)
	if err != nil {
		t.Fatal(err)
	}
	commit := Commitment(committed)
	rotated, _ := NewSeeder("ns", []byte("the new secret 0123456789"), []byte("the old secret 0123456789"))
	for _, tt := range []struct {
		name       string
		seeder     *Seeder
		room       string
		nonce      []byte
		same, open bool // same: derives the committed seed; open: Committed finds it
	}{
		{"the same secret", old, "demo", nonce, true, true},
		{"another instance", must(NewSeeder("ns", []byte("the old secret 0123456789"))), "demo", nonce, true, true},
		{"after a rotation", rotated, "demo", nonce, false, true},
		{"another secret", must(NewSeeder("ns", []byte("the new secret 0123456789"))), "demo", nonce, false, false},
		{"another namespace", must(NewSeeder("ns2", []byte("the old secret 0123456789"))), "demo", nonce, false, false},
		{"another room", old, "demo2", nonce, false, false},
		{"another nonce", old, "demo", bytes.Repeat([]byte{8}, NonceLen), false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.seeder.Seed(tt.room, tt.nonce)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(s, committed) != tt.same {
				t.Errorf("the seed is the committed one: %v, want %v", !tt.same, tt.same)
			}
			if bytes.Equal(s, nonce) {
				t.Error("the seed is the nonce")
			}
			got, err := tt.seeder.Committed(tt.room, tt.nonce, commit)
			switch {
			case tt.open && (err != nil || !bytes.Equal(got, committed)):
				t.Errorf("Committed = %x, %v; want the committed seed", got, err)
			case !tt.open && !errors.Is(err, ErrNoSecret):
				t.Errorf("Committed = %x, %v; want ErrNoSecret", got, err)
			}
		})
	}
	if _, err := old.Seed("demo", nonce[:4]); err == nil {
		t.Error("a short nonce derived a seed")
	}
	if _, err := NewSeeder("ns", nil); err == nil {
		t.Error("an empty secret made a seeder")
	}
}

func must(s *Seeder, err error) *Seeder {
	if err != nil {
		panic(err)
	}
	return s
}
