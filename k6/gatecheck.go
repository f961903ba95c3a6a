package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// GateCheck measures what guarding a shop costs per request, in one run
// on loopback: waitingroom's GET /gate/check with a live session, asked
// directly, and through nginx (a config template such as
// docs/nginx-gate.conf) a protected page (auth_request, then the shop)
// beside an unprotected one (the shop alone), with the shop asked directly
// as the floor. With ProxyURL it also measures waitingroom's reverse proxy
// in front of the same shop.
type GateCheck struct {
	// RoomURL is a running waitingroom; AdminToken its ADMIN_TOKEN.
	RoomURL, AdminToken string
	// Room is made or updated into a gate-mode room for the run.
	Room string
	// Conf is the nginx config template.
	Conf        string
	Concurrency int
	// Duration is the length of each measurement.
	Duration time.Duration
	// ShopAddr is the stand-in shop's loopback address ("": any port).
	ShopAddr string
	// ProxyURL is waitingroom's reverse-proxy listener (PROXY_ADDR), whose
	// ORIGIN_URL must be http://ShopAddr; "" skips it.
	ProxyURL string
	// MaxUnexpected is the share of answers other than the one expected
	// past which a measurement fails.
	MaxUnexpected float64
}

// validateLoads checks a load of concurrency and duration against each of
// urls that is set (see Load.Validate).
func validateLoads(concurrency int, duration time.Duration, urls ...string) error {
	for _, u := range urls {
		if u == "" {
			continue
		}
		if err := (Load{URL: u, Concurrency: concurrency, Duration: duration}).Validate(); err != nil {
			return fmt.Errorf("gatecheck: %w", err)
		}
	}
	return nil
}

// gateRoom saves the measured room at url: gate mode guarding /checkout,
// its hand-off to target, sessions renewed while used, and returns a new
// API key of it. The caller deletes the room.
func gateRoom(ctx context.Context, url, room, token, target string) (apiKey string, err error) {
	err = PutRoom(ctx, url, room, token, map[string]any{"title": "gatecheck", "rate": 100, "maxActive": 0,
		"abandonAfterSeconds": 0, "paused": false, "targetURL": target, "sessionSeconds": 3600,
		"sessionMode": "idle", "protect": []string{"/checkout"}})
	if err == nil {
		apiKey, err = NewAPIKey(ctx, url, room, token)
	}
	if err != nil {
		DeleteRoom(context.Background(), url, room, token)
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	return apiKey, nil
}

// GateCheckLine is one measurement.
type GateCheckLine struct {
	Name   string
	Result Result
}

// Validate returns an error for a run that is unbounded or aims anywhere
// but loopback.
func (g GateCheck) Validate() error {
	if err := validateLoads(g.Concurrency, g.Duration, g.RoomURL, g.ProxyURL); err != nil {
		return err
	}
	switch {
	case g.RoomURL == "":
		return errors.New("gatecheck: no waitingroom URL")
	case g.AdminToken == "" || g.Room == "" || g.Conf == "":
		return errors.New("gatecheck: the admin token, the room and the nginx config are required")
	case g.Duration > 2*time.Minute:
		return fmt.Errorf("gatecheck: duration %v over 2m per measurement", g.Duration)
	}
	return nil
}

// Run sets the room up, lets one buyer through the line to a session,
// measures with that session's cookie, then ends the session and deletes
// the room.
func (g GateCheck) Run(ctx context.Context, progress io.Writer) ([]GateCheckLine, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	ups, err := url.Parse(g.RoomURL)
	if err != nil {
		return nil, fmt.Errorf("gatecheck: %w", err)
	}
	shopAddr := g.ShopAddr
	if shopAddr == "" {
		shopAddr = "127.0.0.1:0"
	}
	shopLn, err := net.Listen("tcp", shopAddr)
	if err != nil {
		return nil, fmt.Errorf("gatecheck: shop: %w", err)
	}
	shop := &Shop{}
	shopSrv := &http.Server{Handler: shop.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go shopSrv.Serve(shopLn)
	defer shopSrv.Close()
	nginxAddr, err := freeLoopback()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "gatecheck: shop on %s, nginx on %s\n", shopLn.Addr(), nginxAddr)

	apiKey, err := gateRoom(ctx, g.RoomURL, g.Room, g.AdminToken, "http://"+nginxAddr+"/checkout")
	if err != nil {
		return nil, err
	}
	defer DeleteRoom(context.Background(), g.RoomURL, g.Room, g.AdminToken)
	dir, err := os.MkdirTemp("", "gatecheck-nginx-")
	if err != nil {
		return nil, fmt.Errorf("gatecheck: %w", err)
	}
	defer os.RemoveAll(dir)
	ngx, err := StartNginx(ctx, g.Conf, dir, map[string]string{"LISTEN": nginxAddr,
		"UPSTREAMS": "server " + ups.Host + ";", "SHOP_UPSTREAMS": "server " + shopLn.Addr().String() + ";",
		"ROOM": g.Room, "ROOM_URL": strings.TrimRight(g.RoomURL, "/")})
	if err != nil {
		return nil, fmt.Errorf("gatecheck: %w", err)
	}
	defer ngx.Stop()

	session, err := g.session(ctx)
	if err != nil {
		return nil, err
	}
	defer EndSession(context.Background(), http.DefaultClient, g.RoomURL, g.Room, apiKey, session)
	cookie := http.Header{"Cookie": {GateCookie + "=" + g.Room + "." + session}}
	check := cookie.Clone()
	check.Set("X-Waitingroom-Room", g.Room)
	nginx := "http://" + nginxAddr
	type measure struct {
		name, url string
		hdr       http.Header
		want      int
	}
	runs := []measure{
		{"shop, direct           GET /", "http://" + shopLn.Addr().String() + "/", cookie, http.StatusOK},
		{"nginx, unguarded       GET /", nginx + "/", cookie, http.StatusOK},
		{"nginx, auth_request    GET /checkout", nginx + "/checkout", cookie, http.StatusOK},
		{"waitingroom, direct    GET /gate/check", strings.TrimRight(g.RoomURL, "/") + "/gate/check", check, http.StatusNoContent},
	}
	if g.ProxyURL != "" {
		p := strings.TrimRight(g.ProxyURL, "/")
		runs = append(runs, measure{"reverse proxy, open    GET /", p + "/", cookie, http.StatusOK},
			measure{"reverse proxy, guarded GET /checkout", p + "/checkout", cookie, http.StatusOK})
	}
	var lines []GateCheckLine
	for _, r := range runs {
		l := Load{URL: r.url, Method: http.MethodGet, Concurrency: g.Concurrency, Duration: g.Duration, Header: r.hdr}
		warm := l
		warm.MaxRequests, warm.Duration = 50*g.Concurrency, min(g.Duration, 2*time.Second)
		if _, err := warm.Run(ctx); err != nil {
			return lines, err
		}
		res, err := l.Run(ctx)
		if err != nil {
			return lines, err
		}
		if err := CheckStatus("gatecheck "+strings.Join(strings.Fields(r.name), " "), res.Status, res.Errors, []int{r.want}, g.MaxUnexpected); err != nil {
			return lines, err
		}
		lines = append(lines, GateCheckLine{Name: r.name, Result: res})
		fmt.Fprintf(progress, "gatecheck: %s done\n", strings.Join(strings.Fields(r.name), " "))
	}
	if strings.Contains(ngx.AccessLog(), "eyJ") {
		return lines, errors.New("gatecheck: a pass is in nginx's access log")
	}
	return lines, nil
}

// session lets one buyer through the line and the hand-off, and returns
// the session id the hand-off set.
func (g GateCheck) session(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b := GateBuyer{RoomURL: strings.TrimRight(g.RoomURL, "/"), Room: g.Room, Client: NewGateClient(nil)}
	if _, err := b.Enter(ctx); err != nil {
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	ready, err := b.WaitReady(ctx)
	if err != nil {
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	h, err := b.TakePass(ctx, ready.Token)
	if err != nil {
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	res, err := PostHandOff(ctx, b.Client, h, g.RoomURL)
	if err != nil {
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	if res.Session == "" {
		return "", fmt.Errorf("gatecheck: the hand-off set no session: %d %s", res.Status, res.Body)
	}
	return res.Session, nil
}

// freeLoopback returns a loopback address nothing listens on right now.
func freeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("gatecheck: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
