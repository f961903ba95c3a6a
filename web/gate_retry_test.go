package web

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
	"waitingroom/web/gatemode"
)

var (
	retryGetForm = regexp.MustCompile(`<form method="get" action="">`)
	repostForm   = regexp.MustCompile(`<form method="post" action="/_waitingroom/enter">\s*<input type="hidden" name="pass" value="([^"]*)">\s*<input type="hidden" name="next" value="([^"]*)">`)
)

// TestGateRetryPostsAgain: the "please retry" pages of the gate's POST
// routes never offer a GET of a POST-only route: the enter page posts the
// same pass and next again, the hand-off page leads back to the room.
func TestGateRetryPostsAgain(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	sw := &switchable{dead: queue.New(dead, "wr:dead")}
	g := newGateHarness(t, func(o *Options) {
		sw.Gates = o.Gates
		o.Gates = sw
	})
	p := g.newPass(t)
	c, tok := g.readyVisitor(t)
	sw.down.Store(true)
	r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout?step=2"}}, map[string]string{"Accept-Language": "en"}, nil)
	m := repostForm.FindStringSubmatch(r.body)
	if r.status != 503 || m == nil || retryGetForm.MatchString(r.body) || html.UnescapeString(m[1]) != p || html.UnescapeString(m[2]) != "/checkout?step=2" {
		t.Fatalf("enter with Redis down: %d %.1500s", r.status, r.body)
	}
	r = g.handoff(t, c, tok)
	if r.status != 503 || retryGetForm.MatchString(r.body) || !strings.Contains(r.body, `href="/r/`+g.room+`"`) {
		t.Fatalf("hand-off with Redis down: %d %.1500s", r.status, r.body)
	}
	// The pass posted again once Redis is back lets the buyer in.
	sw.down.Store(false)
	r = g.form(t, gatemode.EnterPath, url.Values{"pass": {html.UnescapeString(m[1])}, "next": {html.UnescapeString(m[2])}}, nil, nil)
	if r.status != 303 || gateCookieOf(r) == nil {
		t.Fatalf("the retry: %d %.500s", r.status, r.body)
	}
}
