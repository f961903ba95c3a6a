package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelpAndBadFlags: every tool's -h and -help print its usage on stdout
// and exit 0; a flag it does not know exits 2 with the usage on stderr.
// Neither is reported as a failure.
func TestHelpAndBadFlags(t *testing.T) {
	type want struct {
		code           int
		stdout, stderr string
	}
	cases := map[string]want{
		"":           {2, "", "usage: wrload <tool>"},
		"-h":         {0, "usage: wrload <tool>", ""},
		"help":       {0, "usage: wrload <tool>", ""},
		"frobnicate": {2, "", `unknown tool "frobnicate"`},
	}
	for _, tl := range tools() {
		cases[tl.name+" -h"] = want{0, "usage: wrload " + tl.name + " [flags]", ""}
		cases[tl.name+" -help"] = want{0, "usage: wrload " + tl.name + " [flags]", ""}
		cases[tl.name+" -no-such-flag"] = want{2, "", "flag provided but not defined: -no-such-flag\nusage: wrload " + tl.name}
		cases[tl.name+" -h stray"] = want{0, "usage: wrload " + tl.name, ""}
	}
	for line, w := range cases {
		t.Run(line, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := exitCode(run(context.Background(), strings.Fields(line), &stdout, &stderr), &stdout, &stderr)
			if code != w.code || (w.stdout == "") != (stdout.Len() == 0) || !strings.Contains(stdout.String(), w.stdout) ||
				!strings.Contains(stderr.String(), w.stderr) || (w.stderr == "" && stderr.Len() > 0) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, w.code, stdout.String(), stderr.String())
			}
			if strings.Contains(stderr.String(), "FAILED") {
				t.Fatalf("a usage question was reported as a failure:\n%s", stderr.String())
			}
		})
	}
}

// TestExitStatus runs the real command: the exit status a script sees.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"soak", "-h"}, 0, "-hold duration", ""},
		{[]string{"burst", "-help"}, 0, "-passthrough", ""},
		{[]string{"soak", "-bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"loadtest"}, 1, "", "wrload: FAILED: loadtest: -url is required"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) ||
				(tt.stderr == "" && stderr.Len() > 0) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
		})
	}
}
