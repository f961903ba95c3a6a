package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"waitingroom/k6"
)

// drawshareCommand runs a legitimate crowd and a bot through a room's
// pre-queue per challenge setting and compares the bot's share of the
// first drawn places with its share of the joins.
func drawshareCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drawshare", flag.ContinueOnError)
	var d k6.DrawShare
	fs.StringVar(&d.URL, "url", "", "a running waitingroom (loopback only) that trusts loopback as a proxy (TRUSTED_PROXIES)")
	fs.StringVar(&d.AdminToken, "admin-token", "", "its ADMIN_TOKEN: the rooms are made afresh")
	room := fs.String("room", "drawshare", "the rooms' name prefix: <room>-<challenge>")
	challenges := challengesFlag(fs)
	fs.DurationVar(&d.Prequeue, "prequeue", 30*time.Second, "how long the pre-queue lasts before the draw")
	fs.Float64Var(&d.CrowdRate, "crowd-rate", 20, "the legitimate crowd's joins per second (1 to 3 buyers per /24 network)")
	fs.IntVar(&d.Top, "top", 1000, "how many of the first drawn places to count")
	fs.IntVar(&d.Bot.Workers, "workers", 4*runtime.GOMAXPROCS(0), "the bot's identities under way at once")
	keep := fs.Bool("keep", false, "keep the rooms (default: delete them at the end)")
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("drawshare", *progress); err != nil {
		return err
	}
	if d.AdminToken == "" {
		return errors.New("drawshare: -admin-token is required")
	}
	d.Bot.Progress, d.Bot.ProgressEvery = stderr, *progress
	for _, c := range strings.Split(*challenges, ",") {
		rd := d
		rd.Room, rd.Challenge = *room+"-"+c, c
		rep, err := rd.Run(ctx)
		if !*keep {
			_ = k6.DeleteRoom(context.WithoutCancel(ctx), rd.URL, rd.Room, rd.AdminToken)
		}
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, rep)
		if err := rep.Check(); err != nil {
			return err
		}
	}
	return nil
}
