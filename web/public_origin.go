package web

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"waitingroom/web/request"
)

// The absolute URLs of a page (the room page's link preview, the
// console's short links and QR codes) take PUBLIC_URL. Without it they
// take the request's Host, which anyone can forge: a page that is cached
// and shared (the room page, at the app and at the edge) may carry it only
// when it is a host the operator named or a loopback one.

// originsByHost maps the host names of allowedOrigins (ALLOWED_ORIGINS)
// to their origins, in the order listed (an exact host[:port] match wins).
func originsByHost(allowedOrigins []string) map[string][]string {
	m := map[string][]string{}
	for _, o := range allowedOrigins {
		u, err := url.Parse(strings.TrimSuffix(o, "/"))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			continue // New refuses them (newCrossOrigin)
		}
		name := strings.ToLower(u.Hostname())
		m[name] = append(m[name], u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return m
}

// requestOrigin returns the origin for r's absolute URLs, and whether a
// shared page may carry it: PUBLIC_URL when set; else the origin of
// ALLOWED_ORIGINS whose host name is the request's (as configured, so
// that a forged port changes nothing); else the request's own host, over
// https when the request came over TLS (to this server or to a trusted
// proxy that says so), trusted only when it is a loopback host. A host
// that is not a host name or address gives http://localhost, untrusted.
func (s *Server) requestOrigin(r *http.Request) (origin string, trusted bool) {
	if s.publicURL != "" {
		return s.publicURL, true
	}
	host := strings.ToLower(r.Host)
	if !request.ValidHost(host) {
		return "http://localhost", false
	}
	name := request.HostName(host)
	if list := s.trustHosts[name]; len(list) > 0 {
		for _, o := range list {
			if strings.HasSuffix(o, "://"+host) {
				return o, true
			}
		}
		return list[0], true
	}
	scheme := "http://"
	if s.overTLS(r) {
		scheme = "https://"
	}
	return scheme + host, loopbackHost(name)
}

// baseURL is the origin of the console's absolute URLs (short links, QR
// codes, the embed snippet): requestOrigin's, even for a host it would
// not trust on a shared page. The console's pages are the signed-in
// operator's own, never cached or shown to anyone else, and the session
// cookie only reaches the host the operator opened.
func (s *Server) baseURL(r *http.Request) string {
	origin, _ := s.requestOrigin(r)
	return origin
}

// loopbackHost reports whether name is localhost or a loopback address.
func loopbackHost(name string) bool {
	if name == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(name)
	return err == nil && a.Unmap().IsLoopback()
}

// overTLS reports whether the request came over TLS, to this server or to
// a trusted proxy that says so.
func (s *Server) overTLS(r *http.Request) bool { return request.OverTLS(r, s.trusted) }
