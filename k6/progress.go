package k6

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// DefaultProgressEvery is how often a long run prints a progress line when
// its ProgressEvery is zero: often enough that a quiet run is a stuck one.
const DefaultProgressEvery = 5 * time.Second

// every calls report every interval (DefaultProgressEvery when it is not
// positive) until the returned stop is called. stop waits for a report
// under way and may be called more than once.
func every(interval time.Duration, report func()) (stop func()) {
	if interval <= 0 {
		interval = DefaultProgressEvery
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				report()
			}
		}
	})
	return sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}

// prefixLines writes each complete line written to it to w, behind
// prefix; several of them may share w through mu.
type prefixLines struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixLines) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		_, err := io.WriteString(p.w, p.prefix+string(p.buf[:i+1]))
		p.mu.Unlock()
		p.buf = p.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}
