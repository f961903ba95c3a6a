package k6

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// GateSession goes through room's line at the waiting room at base as one
// buyer and hands the pass off to the shop's callback: it enters, waits
// for READY, asks for the pass (POST /r/{room}/pass) and posts it to the
// hand-off page's action. It returns the wr_gate cookie the shop's host
// set. The room must send its buyers to that shop (targetURL) and let
// them in soon.
func GateSession(ctx context.Context, base, room string) (*http.Cookie, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var tok string
	for path, method := "/api/rooms/"+room+"/queue", http.MethodPost; tok == ""; path, method = "/api/rooms/"+room+"/queue/position", http.MethodGet {
		b, err := send(ctx, hc, method, base+path, "", nil)
		if err != nil {
			return nil, fmt.Errorf("gate session: %w", err)
		}
		var p struct {
			Status     string  `json:"status"`
			EntryToken *string `json:"entryToken"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("gate session: position: %w", err)
		}
		if p.EntryToken != nil {
			tok = *p.EntryToken
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("gate session: never let in: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	page, err := send(ctx, hc, http.MethodPost, base+"/r/"+room+"/pass", url.Values{"entry_token": {tok}}.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("gate session: hand-off: %w", err)
	}
	action, form := handoffForm(string(page))
	if action == "" || form.Get("pass") == "" {
		return nil, errors.New("gate session: the hand-off page has no pass form")
	}
	var set []*http.Cookie
	if _, err := send(ctx, hc, http.MethodPost, action, form.Encode(), &set); err != nil {
		return nil, fmt.Errorf("gate session: enter: %w", err)
	}
	for _, c := range set {
		if c.Name == "wr_gate" {
			return &http.Cookie{Name: c.Name, Value: c.Value}, nil
		}
	}
	return nil, errors.New("gate session: the shop's callback set no wr_gate cookie")
}

// send makes one request (a form when body is not empty) and returns the
// answer's body; a 303 counts as success, its cookies put in set.
func send(ctx context.Context, hc *http.Client, method, u, body string, set *[]*http.Cookie) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("%s %s: %d", method, u, resp.StatusCode)
	}
	if set != nil {
		*set = resp.Cookies()
	}
	return b, nil
}

var (
	formAction = regexp.MustCompile(`<form id="wr-handoff" method="post" action="([^"]+)"`)
	formInput  = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)"`)
)

// handoffForm reads the hand-off page's form: its action and fields.
func handoffForm(page string) (string, url.Values) {
	m := formAction.FindStringSubmatch(page)
	if m == nil {
		return "", nil
	}
	v := url.Values{}
	for _, in := range formInput.FindAllStringSubmatch(page, -1) {
		v.Set(in[1], html.UnescapeString(in[2]))
	}
	return html.UnescapeString(m[1]), v
}
