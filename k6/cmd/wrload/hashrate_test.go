package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"waitingroom/server/servicetest"
)

// TestHashrate has headless Chromium's room page solve small worst-case
// challenges with the vendored solver, with one and two workers: every
// answer must verify with altcha-lib-go, and each count reports a rate.
func TestHashrate(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	var out bytes.Buffer
	args := []string{"-static", "../../../static", "-chromium", servicetest.Chromium(t),
		"-n", "1", "-max", "3000", "-workers", "1,2"}
	if err := hashrateCommand(context.Background(), args, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"maxNumber 3000", "workers 1: ", "workers 2: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
