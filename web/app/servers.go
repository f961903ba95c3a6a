package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/room"
	"waitingroom/web"
	"waitingroom/web/gatemode"
)

// servers are the HTTP servers of the public port, the metrics' port
// and, in reverse-proxy mode, the proxy's port.
type servers struct {
	public  *http.Server
	metrics *http.Server
	proxy   *http.Server    // nil but in reverse-proxy mode
	gate    *gatemode.Proxy // the proxy's handler
}

// newServers builds the servers on the handler and the metrics.
func newServers(cfg config.Config, h *web.Server, metrics *web.Metrics, lns listeners, ln net.Listener, log *slog.Logger) (servers, error) {
	sv := servers{public: publicServer(cfg, h, log)}
	if lns.proxy != nil {
		var err error
		if sv.gate, err = h.NewProxy(gatemode.ProxyOptions{Origin: cfg.OriginURL, MainAddr: ln.Addr().String(),
			WriteTimeout: cfg.WriteTimeout}); err != nil {
			return servers{}, err
		}
		sv.proxy = proxyServer(sv.gate, log)
	}
	sv.metrics = metricsServer(metrics, log)
	return sv, nil
}

// serve serves ln and lns until ctx is done, then shuts the public and
// the proxy's servers down gracefully within cfg.ShutdownTimeout; or
// until one of them fails. The proxy's loop runs among l.
func (sv servers) serve(ctx context.Context, cfg config.Config, ln net.Listener, lns listeners, l *loops, log *slog.Logger) (err error) {
	serveErr := make(chan error, 1)
	go func() { serveErr <- sv.public.Serve(ln) }()
	go sv.metrics.Serve(lns.metrics)
	proxyErr := make(chan error, 1)
	if sv.proxy != nil {
		l.run(sv.gate.Run)
		go func() { proxyErr <- sv.proxy.Serve(lns.proxy) }()
		log.Info("reverse proxy listening", "addr", lns.proxy.Addr().String(), "origin", cfg.OriginURL)
	}
	if cfg.DemoMode() {
		log.Info("waitingroom listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/r/"+room.Demo, "tick", cfg.Tick)
	} else {
		log.Info("waitingroom listening", "addr", ln.Addr().String(), "tick", cfg.Tick)
	}
	log.Info("metrics listening", "addr", lns.metrics.Addr().String(), "url", "http://"+lns.metrics.Addr().String()+"/metrics")

	select {
	case err = <-serveErr:
	case err = <-proxyErr:
		err = fmt.Errorf("reverse proxy: %w", err)
		sv.public.Close()
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		if sv.proxy != nil {
			var pwg sync.WaitGroup
			pwg.Go(func() { sv.proxy.Shutdown(sctx) })
			err = sv.public.Shutdown(sctx)
			pwg.Wait()
		} else {
			err = sv.public.Shutdown(sctx)
		}
		cancel()
	}
	if sv.proxy != nil {
		sv.proxy.Close() // whatever outlived the graceful shutdown, or the main server's end
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// metricsServer serves /metrics on the private metrics port.
func metricsServer(m *web.Metrics, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// proxyServer is the reverse-proxy listener's server: the public
// server's header and read bounds and idle-connection cap, but no
// WriteTimeout, which would cut every long download or stream of the
// shop; the proxy gives each write its own deadline instead
// (gatemode.ProxyOptions.WriteTimeout).
func proxyServer(p *gatemode.Proxy, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           p.Handler(),
		ConnState:         p.ConnState,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// publicServer is the public HTTP server. Every answer but an SSE stream
// must be written within WRITE_TIMEOUT, so that a client that pipelines
// requests and never reads cannot pin a connection: SSE streams are
// hijacked and set deadlines of their own (web/sse/subscribe.go). Request
// headers must arrive within ReadHeaderTimeout (a slow client gets no
// answer, only a closed connection), bodies within ReadTimeout, and larger
// headers than MaxHeaderBytes get 431 from net/http itself. ConnState caps
// each client's idle keep-alive connections (IDLE_CONNS_PER_IP).
func publicServer(cfg config.Config, h *web.Server, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h.Handler(),
		ConnState:         h.ConnState,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
