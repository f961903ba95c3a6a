package app

import (
	"fmt"
	"net"

	"waitingroom/server/config"
)

// listeners are the server's ports besides the public one: the metrics'
// and, in reverse-proxy mode, the proxy's.
type listeners struct {
	metrics net.Listener
	proxy   net.Listener // nil but in reverse-proxy mode
}

// openListeners listens on METRICS_ADDR and PROXY_ADDR. A taken address
// stops the start-up. On an error it closes what it opened.
func openListeners(cfg config.Config) (listeners, error) {
	// The metrics listen privately, never on the public port.
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return listeners{}, fmt.Errorf("METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
	}
	l := listeners{metrics: mln}
	// Reverse-proxy mode listens on a port of its own (PROXY_ADDR).
	if cfg.ProxyAddr != "" {
		if l.proxy, err = net.Listen("tcp", cfg.ProxyAddr); err != nil {
			mln.Close()
			return listeners{}, fmt.Errorf("PROXY_ADDR %s: %w", cfg.ProxyAddr, err)
		}
	}
	return l, nil
}

// close closes the proxy's listener, then the metrics'.
func (l listeners) close() {
	if l.proxy != nil {
		l.proxy.Close()
	}
	l.metrics.Close()
}
