package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"waitingroom/web/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	assets := app.Assets{Static: staticFS, Migrations: migrationsFS}
	err := app.Main(ctx, assets, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, log)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp): // -h: the usage is printed
	default:
		log.Error("waitingroom: fatal", "err", err)
		os.Exit(1)
	}
}
