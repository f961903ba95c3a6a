// Package app is the waitingroom binary: its commands (serve, migrate,
// admin) and the wiring that builds the server from its configuration.
package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
)

// Assets are the files the binary embeds: Static holds the directory
// static/ and Migrations the directory migrations/, each under its name.
type Assets struct {
	Static     fs.FS
	Migrations fs.FS
}

const usage = `usage: waitingroom [command] [flags]

commands:
  serve      serve the waiting room (the default)
  migrate    apply the SQL migrations to DATABASE_URL
  admin      manage the console's operators: admin add-user NAME, list-users, remove-user NAME

Run "waitingroom serve -h" for the server's flags; each mirrors an environment variable.
The load and measurement tools are a separate binary: go run ./k6/cmd/wrload -h
`

// Main dispatches a subcommand. It returns when the command is done or ctx
// is cancelled (SIGTERM), after a graceful shutdown.
func Main(ctx context.Context, assets Assets, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serveCommand(ctx, assets, args, getenv, stdout, log)
	case "migrate":
		return migrateCommand(ctx, assets, args, getenv, stdout, log)
	case "admin":
		return adminCommand(ctx, assets, args, getenv, stdin, stdout, log)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
