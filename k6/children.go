package k6

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// RunChildren runs this binary once per argument list, in parallel, and
// decodes the JSON each child prints as its last line of output. It spreads
// a load over processes when one process's open files would not be enough.
// The children's standard error (their progress lines) goes on to
// progress, each line behind "child N: ", as it comes.
func RunChildren[T any](ctx context.Context, argLists [][]string, progress io.Writer) ([]T, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("children: %w", err)
	}
	out := make([]T, len(argLists))
	errs := make([]error, len(argLists))
	var wg sync.WaitGroup
	var progressMu sync.Mutex
	for i, args := range argLists {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, exe, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if progress != nil {
				cmd.Stderr = io.MultiWriter(&stderr, &prefixLines{mu: &progressMu, w: progress, prefix: fmt.Sprintf("child %d: ", i)})
			}
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("child %d: %w: %s", i, err, lastLine(stderr.Bytes()))
				return
			}
			if err := json.Unmarshal(lastLine(stdout.Bytes()), &out[i]); err != nil {
				errs[i] = fmt.Errorf("child %d: report: %w", i, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
