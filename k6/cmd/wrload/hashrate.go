package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/altcha-org/altcha-lib-go"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"waitingroom/views"
)

// hashrateRoom is the room name of the page the tool serves.
const hashrateRoom = "hashrate"

// hashrateCommand measures how fast headless Chromium solves the room's
// proof of work with what ships: the real room page (views.Room,
// static/app.js and the vendored ALTCHA worker) on loopback, in front of a
// stand-in API. It refuses the page's first enter with 428, hands out a
// challenge made by altcha-lib-go whose answer is maxNumber itself (the
// worst case: maxNumber+1 hashes) and checks the enter's X-Altcha with
// altcha-lib-go. A solve is the time from the challenge's answer to the
// proved enter. It prints hashes per second with one worker
// (hardwareConcurrency emulated as 1: one core) and with the page's own
// count.
func hashrateCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hashrate", flag.ContinueOnError)
	static := fs.String("static", "static", "the static folder (app.js, app.css, vendor/altcha/worker.js); run from the module root")
	chromium := fs.String("chromium", "", "Chromium's path (default $CHROME_PATH, else /usr/bin/chromium)")
	n := fs.Int("n", 5, "timed solves per worker count (after one untimed warm-up)")
	maxNumber := fs.Int64("max", 200000, "each challenge's maxNumber (its answer, so each solve hashes maxNumber+1 times)")
	workers := fs.String("workers", "1,page", `comma-separated: a hardwareConcurrency to emulate (1-4; app.js starts min(4, it) workers), or "page" (the browser's own)`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 1 || *n > 100 {
		return errors.New("hashrate: -n out of 1..100")
	}
	if *maxNumber < 1000 || *maxNumber > 100_000_000 {
		return errors.New("hashrate: -max out of 1000..100000000")
	}
	for _, f := range []string{"app.js", "app.css", "vendor/altcha/worker.js"} {
		if _, err := os.Stat(filepath.Join(*static, f)); err != nil {
			return fmt.Errorf("hashrate: -static: %w", err)
		}
	}
	path := *chromium
	if path == "" {
		path = os.Getenv("CHROME_PATH")
	}
	if path == "" {
		path = "/usr/bin/chromium"
	}

	api := &hashrateAPI{key: strconv.FormatInt(time.Now().UnixNano(), 36), maxNumber: *maxNumber, solved: make(chan solveResult, 1)}
	base, stop, err := serveHashrate(api, *static)
	if err != nil {
		return err
	}
	defer stop()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if _, err := chromedp.Run(browser, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Errorf("hashrate: start %s: %w", path, err)
	}
	version, _ := chromedp.Run(browser, chromedp.Evaluate[string](`navigator.userAgent.match(/Chrome\/[\d.]+/)[0]`))
	cores, err := chromedp.Run(browser, chromedp.Evaluate[int64](`navigator.hardwareConcurrency || 2`))
	if err != nil {
		return fmt.Errorf("hashrate: %w", err)
	}
	fmt.Fprintf(stdout, "headless %s, hardwareConcurrency %d; %d solves of maxNumber %d (answer = maxNumber: %d hashes each)\n",
		version, cores, *n, *maxNumber, *maxNumber+1)

	for _, w := range strings.Split(*workers, ",") {
		concurrency := cores
		if w != "page" {
			if concurrency, err = strconv.ParseInt(w, 10, 64); err != nil || concurrency < 1 || concurrency > 4 {
				return fmt.Errorf("hashrate: -workers: %q is not 1..4 or page", w)
			}
		}
		ms, err := timeSolves(browser, base, api, concurrency, w != "page", *n)
		if err != nil {
			return err
		}
		rate := func(m float64) float64 { return float64(*maxNumber+1) / (m / 1000) }
		med := ms[len(ms)/2]
		fmt.Fprintf(stdout, "workers %d: %s hashes/s (median solve %.0f ms; slowest %s, fastest %s hashes/s)\n",
			max(1, min(4, concurrency)), thousands(rate(med)), med, thousands(rate(ms[len(ms)-1])), thousands(rate(ms[0])))
	}
	return nil
}

// timeSolves opens the room page n+1 times in a tab of browser (with
// hardwareConcurrency emulated when emulate is set) and returns the
// solves' times in milliseconds, sorted; the first, which warms the JIT
// up, is not counted.
func timeSolves(browser context.Context, base string, api *hashrateAPI, concurrency int64, emulate bool, n int) ([]float64, error) {
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	if emulate {
		if _, err := chromedp.Call(tab, emulation.SetHardwareConcurrencyOverride,
			emulation.SetHardwareConcurrencyOverrideParams{HardwareConcurrency: concurrency}); err != nil {
			return nil, fmt.Errorf("hashrate: emulate hardwareConcurrency %d: %w", concurrency, err)
		}
	}
	var ms []float64
	for i := range n + 1 {
		if _, err := chromedp.Run(tab, chromedp.Navigate(base+"/r/"+hashrateRoom)); err != nil {
			return nil, fmt.Errorf("hashrate: open the room page: %w", err)
		}
		select {
		case res := <-api.solved:
			if res.err != nil {
				return nil, res.err
			}
			if i > 0 {
				ms = append(ms, float64(res.took.Microseconds())/1000)
			}
		case <-time.After(3 * time.Minute):
			return nil, errors.New("hashrate: the page sent no answer in 3 minutes")
		}
	}
	slices.Sort(ms)
	return ms, nil
}

// solveResult is one proved enter: the time since its challenge was
// served, or why the answer was refused.
type solveResult struct {
	took time.Duration
	err  error
}

// hashrateAPI stands in for the room's API: challenges and enters.
type hashrateAPI struct {
	key       string
	maxNumber int64
	solved    chan solveResult
	mu        sync.Mutex
	served    time.Time
}

func (a *hashrateAPI) challenge(w http.ResponseWriter, r *http.Request) {
	exp := time.Now().Add(2 * time.Minute)
	ch, err := altcha.CreateChallenge(altcha.ChallengeOptions{HMACKey: a.key, MaxNumber: a.maxNumber, Number: &a.maxNumber, Expires: &exp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, _ := json.Marshal(ch)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	a.mu.Lock()
	a.served = time.Now()
	a.mu.Unlock()
	w.Write(body)
}

// enter refuses an enter without a proof (428), and ends the page's visit
// after one (a closed sale: the page stops), reporting the solve.
func (a *hashrateAPI) enter(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	payload := r.Header.Get("X-Altcha")
	if payload == "" {
		w.WriteHeader(http.StatusPreconditionRequired)
		io.WriteString(w, `{"error":"challenge_required","message":"A proof of work is needed.","challenge":"/api/rooms/`+hashrateRoom+`/challenge"}`)
		return
	}
	a.mu.Lock()
	took := time.Since(a.served)
	a.mu.Unlock()
	res := solveResult{took: took}
	if ok, err := altcha.VerifySolutionSafe(payload, a.key, true); !ok || err != nil {
		res.err = fmt.Errorf("hashrate: the page's answer does not verify (%v)", err)
	}
	select {
	case a.solved <- res:
	default:
	}
	w.WriteHeader(http.StatusConflict)
	io.WriteString(w, `{"error":"sale_ended","message":"Measured."}`)
}

// serveHashrate serves the room page, the static folder and api on
// loopback.
func serveHashrate(api *hashrateAPI, static string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("hashrate: listen: %w", err)
	}
	page := views.RoomPage{Room: hashrateRoom, Title: "Hash rate", T: views.For("en"),
		Assets: views.Assets{CSS: "/static/app.css", JS: "/static/app.js", Solver: "/static/vendor/altcha/worker.js"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/"+hashrateRoom, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		views.Room(page).Render(r.Context(), w)
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServer(http.Dir(static))))
	mux.HandleFunc("GET /api/rooms/"+hashrateRoom+"/challenge", api.challenge)
	mux.HandleFunc("POST /api/rooms/"+hashrateRoom+"/queue", api.enter)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// thousands formats a rate as a whole number with thousands separators.
func thousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
