package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"waitingroom/k6"
)

// plotCommand draws burst runs (their -json files) into one PNG: order p95
// and admitted/s over time, one line per run.
func plotCommand(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	in := fs.String("in", "", "burst -json files, comma-separated")
	out := fs.String("out", "burst.png", "PNG to write")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return errors.New("plot: -in is required")
	}
	var series []k6.Series
	for _, path := range strings.Split(*in, ",") {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		var run burstRun
		if err := json.Unmarshal(b, &run); err != nil {
			return fmt.Errorf("plot: %s: %w", path, err)
		}
		name := "with the room"
		if run.Mode == "passthrough" {
			name = "passthrough (no room)"
		}
		series = append(series, k6.Series{Name: name, Timeline: run.Timeline})
	}
	if err := k6.PlotBurst(*out, series); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
