package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, log)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp): // -h: the usage is printed
	default:
		log.Error("waitingroom: fatal", "err", err)
		os.Exit(1)
	}
}

const usage = `usage: waitingroom [command] [flags]

commands:
  serve      serve the waiting room (the default)
  migrate    apply the SQL migrations to DATABASE_URL
  admin      manage the console's operators: admin add-user NAME, list-users, remove-user NAME

Run "waitingroom serve -h" for the server's flags; each mirrors an environment variable.
The load and measurement tools are a separate binary: go run ./k6/cmd/wrload -h
`

// run dispatches a subcommand. It returns when the command is done or ctx
// is cancelled (SIGTERM), after a graceful shutdown.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serveCommand(ctx, args, getenv, stdout, log)
	case "migrate":
		return migrateCommand(ctx, args, getenv, stdout, log)
	case "admin":
		return adminCommand(ctx, args, getenv, os.Stdin, stdout, log)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
