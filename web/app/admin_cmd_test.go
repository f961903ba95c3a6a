package app

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"

	"waitingroom/server/operator"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
)

// TestAdminUsers adds, lists and removes operators in a real PostgreSQL,
// and refuses what it must.
func TestAdminUsers(t *testing.T) {
	dbURL := servicetest.PostgresURL(t)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
	admin := func(stdin string, args ...string) (string, error) {
		var out strings.Builder
		err := adminCommand(context.Background(), repoAssets(), args, env, strings.NewReader(stdin), &out, quietLog())
		return out.String(), err
	}
	for _, tt := range []struct {
		name    string
		stdin   string
		args    []string
		out     string
		wantErr string
	}{
		{"add", "correct horse battery\n", []string{"add-user", "alice"}, "operator alice added\n", ""},
		{"add without a newline, CRLF", "another fine password\r\n", []string{"add-user", "bob"}, "operator bob added\n", ""},
		{"add twice", "correct horse battery\n", []string{"add-user", "alice"}, "", "already exists"},
		{"short password", "short\n", []string{"add-user", "carol"}, "", "at least 12"},
		{"long password", strings.Repeat("x", 300) + "\n", []string{"add-user", "carol"}, "", "at most 256"},
		{"no password", "", []string{"add-user", "carol"}, "", "no password on stdin"},
		{"bad name", "correct horse battery\n", []string{"add-user", "Carol!"}, "", "a-z"},
		{"reserved name", "correct horse battery\n", []string{"add-user", "admin"}, "", "admin"},
		{"no name", "", []string{"add-user"}, "", "takes 1 argument"},
		{"list", "", []string{"list-users"}, "alice\nbob\n", ""},
		{"remove", "", []string{"remove-user", "bob"}, "operator bob removed\n", ""},
		{"remove again", "", []string{"remove-user", "bob"}, "", "no such operator"},
		{"list after", "", []string{"list-users"}, "alice\n", ""},
		{"unknown", "", []string{"frob"}, "", "unknown command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := admin(tt.stdin, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.out {
				t.Fatalf("out %q, %v; want %q", out, err, tt.out)
			}
		})
	}
	// The stored password signs alice in; no one else was added.
	db, err := store.Open(context.Background(), dbURL, 2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ops, _ := operator.New(db, operator.Options{Hash: &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}})
	if err := ops.Authenticate(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatalf("alice: %v", err)
	}
	if names, _ := ops.List(context.Background()); len(names) != 1 {
		t.Fatalf("operators %v", names)
	}
}

// TestAdminRefusesTheEmbeddedStore: without DATABASE_URL there is nothing
// to add an operator to, and it says why.
func TestAdminRefusesTheEmbeddedStore(t *testing.T) {
	for _, args := range [][]string{{"add-user", "alice"}, {"list-users"}} {
		err := Main(context.Background(), repoAssets(), append([]string{"admin"}, args...), func(string) string { return "" }, strings.NewReader(""), io.Discard, quietLog())
		if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is empty") || !strings.Contains(err.Error(), "in-memory") {
			t.Fatalf("%v: %v", args, err)
		}
	}
}
