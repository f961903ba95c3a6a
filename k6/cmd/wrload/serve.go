package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// served is a server process a tool started (serveProcess).
type served struct {
	cmd *exec.Cmd
	// exited receives the process's end once; whoever takes it puts it
	// back (see waitHealthy).
	exited chan error
}

// serveProcess starts bin serve with env added to this process's, its
// output to out.
func serveProcess(bin string, env []string, out io.Writer) (*served, error) {
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &served{cmd: cmd, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	return s, nil
}

// stop ends the process: SIGTERM, and SIGKILL after 15 s.
func (s *served) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}
