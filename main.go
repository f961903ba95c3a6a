package main

import (
	"context"
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
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, log); err != nil {
		log.Error("waitingroom: fatal", "err", err)
		os.Exit(1)
	}
}

const usage = `usage: waitingroom [command] [flags]

commands:
  serve      serve the waiting room (the default)
  migrate    apply the SQL migrations to DATABASE_URL
  loadtest   drive an HTTP load at a running server (see: waitingroom loadtest -h)
  soak       hold N waiting visitors over SSE (or polling) and measure the cost
  burst      a flash sale: N buyers enter, wait, are let in and order
  calibrate  step the order rate, find the knee, recommend (and -apply) a rate
  plot       draw burst runs (-json files) into a PNG
  redis-memory   Redis bytes per waiting visitor, beside a bare ZSET entry
  sse-reference  r3labs/sse with its defaults, the soak's reference server

Run "waitingroom serve -h" for the server's flags; each mirrors an environment variable.
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
	case "loadtest":
		return loadtestCommand(ctx, args, stdout)
	case "migrate":
		return migrateCommand(ctx, args, getenv, stdout, log)
	case "redis-memory":
		return memoryCommand(ctx, args, stdout)
	case "sse-reference":
		return referenceCommand(ctx, args, stdout)
	case "plot":
		return plotCommand(ctx, args, stdout)
	case "calibrate":
		return calibrateCommand(ctx, args, stdout)
	case "burst":
		return burstCommand(ctx, args, stdout)
	case "soak":
		return soakCommand(ctx, args, stdout)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
