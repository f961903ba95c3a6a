package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/term"

	"waitingroom/server/config"
	"waitingroom/server/operator"
	"waitingroom/server/store"
)

const adminUsage = `usage: waitingroom admin <command>

commands:
  add-user NAME      add a console operator; the password is read from stdin (one line)
  list-users         list the operators
  remove-user NAME   remove an operator and end their sessions

The operators live in DATABASE_URL (PostgreSQL), migrated first.
`

// adminCommand manages the console's operators in DATABASE_URL.
func adminCommand(ctx context.Context, assets Assets, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(stdout, adminUsage)
		if len(args) == 0 {
			return errors.New("admin: a command is required")
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	want := map[string]int{"add-user": 1, "list-users": 0, "remove-user": 1}
	n, known := want[cmd]
	if !known {
		fmt.Fprint(stdout, adminUsage)
		return fmt.Errorf("admin: unknown command %q", cmd)
	}
	if len(rest) != n {
		fmt.Fprint(stdout, adminUsage)
		return fmt.Errorf("admin %s: takes %d argument(s), got %d", cmd, n, len(rest))
	}
	if n == 1 && !operator.ValidName(rest[0]) {
		return fmt.Errorf("admin %s: %w", cmd, operator.ErrBadName)
	}
	cfg, err := config.Parse(nil, getenv, stdout)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if cfg.DatabaseURL == "" {
		return fmt.Errorf("admin %s: DATABASE_URL is empty: without it the server keeps its data in an in-memory store "+
			"that lives only inside the running server, so operators added here could not reach it. "+
			"Set DATABASE_URL to the server's PostgreSQL (for a local demo, sign in with the demo token the server prints)", cmd)
	}
	var password string
	if cmd == "add-user" { // read before connecting: a typo costs no connection
		if password, err = readPassword(stdin, stdout, rest[0]); err != nil {
			return err
		}
		if !operator.ValidPassword(password) {
			return fmt.Errorf("admin add-user: %w", operator.ErrBadPassword)
		}
	}
	db, err := store.Open(ctx, cfg.DatabaseURL, 2, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx, assets.migrations()); err != nil {
		return err
	}
	ops, err := operator.New(db, operator.Options{})
	if err != nil {
		return err
	}
	switch cmd {
	case "add-user":
		if err := ops.Add(ctx, rest[0], password); err != nil {
			return fmt.Errorf("admin add-user: %w", err)
		}
		fmt.Fprintf(stdout, "operator %s added\n", rest[0])
	case "remove-user":
		if err := ops.Remove(ctx, rest[0]); err != nil {
			return fmt.Errorf("admin remove-user: %w", err)
		}
		fmt.Fprintf(stdout, "operator %s removed\n", rest[0])
	case "list-users":
		names, err := ops.List(ctx)
		if err != nil {
			return fmt.Errorf("admin list-users: %w", err)
		}
		for _, name := range names {
			fmt.Fprintln(stdout, name)
		}
	}
	return nil
}

// readPassword reads one line from stdin: without echo, after a prompt,
// when stdin is a terminal.
func readPassword(stdin io.Reader, stdout io.Writer, name string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stdout, "Password for %s (at least %d characters): ", name, operator.MinPassword)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stdout)
		if err != nil {
			return "", fmt.Errorf("admin add-user: read the password: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, operator.MaxPassword+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("admin add-user: read the password from stdin: %w", err)
	}
	if line == "" {
		return "", errors.New("admin add-user: no password on stdin (give it as one line)")
	}
	return strings.TrimRight(line, "\r\n"), nil
}
