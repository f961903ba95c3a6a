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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/altcha-org/altcha-lib-go"
	"github.com/chromedp/chromedp"
)

// hashratePage solves ALTCHA challenges with the vendored solver the room
// page runs (static/vendor/altcha/worker.js), split over n workers as
// app.js and altcha's widget split them: worker i searches [i·c, i·c + c]
// with c = ceil(maxNumber / n), and the first answer stops the others.
const hashratePage = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>hashrate</title></head><body>
<script>
function solve(ch, n) {
  var t0 = performance.now(), c = Math.ceil(ch.maxNumber / n), ws = [];
  return new Promise(function (resolve, reject) {
    var left = n, found = null;
    function end() { ws.forEach(function (w) { w.terminate(); }); }
    for (var i = 0; i < n; i++) {
      var w = new Worker("/worker.js");
      ws.push(w);
      w.onerror = function (e) { end(); reject(new Error(e.message || "worker error")); };
      w.onmessage = function (e) {
        left--;
        if (e.data && !found) {
          found = e.data;
          ws.forEach(function (o) { o.postMessage({ type: "abort" }); });
        }
        if (found || left === 0) { end(); resolve(JSON.stringify({ number: found ? found.number : -1, ms: performance.now() - t0 })); }
      };
      w.postMessage({ type: "work", payload: ch, start: i * c, max: i * c + c });
    }
  });
}
</script></body></html>`

// hashrateCommand measures how fast headless Chromium solves the room's
// proof of work: it serves a page and the vendored solver on loopback,
// has the browser solve challenges made by altcha-lib-go whose answer is
// maxNumber itself (the worst case: maxNumber+1 hashes), checks every
// answer with altcha-lib-go, and prints hashes per second, with one worker
// (one core) and with as many as the room page would start.
func hashrateCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hashrate", flag.ContinueOnError)
	worker := fs.String("worker", "static/vendor/altcha/worker.js", "the vendored ALTCHA worker (run from the module root)")
	chromium := fs.String("chromium", "", "Chromium's path (default $CHROME_PATH, else /usr/bin/chromium)")
	n := fs.Int("n", 5, "timed solves per worker count (after one untimed warm-up)")
	maxNumber := fs.Int64("max", 200000, "each challenge's maxNumber (its answer, so each solve hashes maxNumber+1 times)")
	workers := fs.String("workers", "1,page", `worker counts, comma-separated; "page" is the room page's own (static/app.js: min(4, hardwareConcurrency))`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 1 || *n > 100 {
		return errors.New("hashrate: -n out of 1..100")
	}
	if *maxNumber < 1000 || *maxNumber > 100_000_000 {
		return errors.New("hashrate: -max out of 1000..100000000")
	}
	js, err := os.ReadFile(*worker)
	if err != nil {
		return fmt.Errorf("hashrate: read the worker: %w", err)
	}
	path := *chromium
	if path == "" {
		path = os.Getenv("CHROME_PATH")
	}
	if path == "" {
		path = "/usr/bin/chromium"
	}

	base, stop, err := serveHashrate(js)
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
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if _, err := chromedp.Run(tab, chromedp.Navigate(base)); err != nil {
		return fmt.Errorf("hashrate: open the page in %s: %w", path, err)
	}
	version, _ := chromedp.Run(tab, chromedp.Evaluate[string](`navigator.userAgent.match(/Chrome\/[\d.]+/)[0]`))
	cores, err := chromedp.Run(tab, chromedp.Evaluate[int](`navigator.hardwareConcurrency || 2`))
	if err != nil {
		return fmt.Errorf("hashrate: %w", err)
	}
	fmt.Fprintf(stdout, "headless %s, hardwareConcurrency %d; %d solves of maxNumber %d (answer = maxNumber: %d hashes each)\n",
		version, cores, *n, *maxNumber, *maxNumber+1)

	key := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, w := range strings.Split(*workers, ",") {
		count := max(1, min(4, cores)) // as static/app.js starts them
		if w != "page" {
			if count, err = strconv.Atoi(w); err != nil || count < 1 || count > 16 {
				return fmt.Errorf("hashrate: -workers: %q is not 1..16 or page", w)
			}
		}
		var ms []float64
		for i := range *n + 1 {
			took, err := solveOnce(tab, key, *maxNumber, count)
			if err != nil {
				return err
			}
			if i > 0 { // the first warms the JIT up
				ms = append(ms, took)
			}
		}
		slices.Sort(ms)
		rate := func(m float64) float64 { return float64(*maxNumber+1) / (m / 1000) }
		med := ms[len(ms)/2]
		fmt.Fprintf(stdout, "workers %2d: %s hashes/s (median solve %.0f ms; slowest %s, fastest %s hashes/s)\n",
			count, thousands(rate(med)), med, thousands(rate(ms[len(ms)-1])), thousands(rate(ms[0])))
	}
	return nil
}

// solveOnce has the page solve one worst-case challenge with count
// workers, checks the answer with altcha-lib-go, and returns the solve's
// wall time in milliseconds (workers started and stopped included).
func solveOnce(tab context.Context, key string, maxNumber int64, count int) (float64, error) {
	ch, err := altcha.CreateChallenge(altcha.ChallengeOptions{HMACKey: key, MaxNumber: maxNumber, Number: &maxNumber})
	if err != nil {
		return 0, fmt.Errorf("hashrate: create a challenge: %w", err)
	}
	chJSON, _ := json.Marshal(ch)
	out, err := chromedp.Run(tab, chromedp.Evaluate[string](fmt.Sprintf("solve(%s, %d)", chJSON, count), chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, fmt.Errorf("hashrate: solve: %w", err)
	}
	var res struct {
		Number int64   `json:"number"`
		MS     float64 `json:"ms"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return 0, fmt.Errorf("hashrate: the page answered %q", out)
	}
	payload := altcha.Payload{Algorithm: ch.Algorithm, Challenge: ch.Challenge, Number: res.Number, Salt: ch.Salt, Signature: ch.Signature}
	if ok, err := altcha.VerifySolutionSafe(payload, key, false); !ok || err != nil {
		return 0, fmt.Errorf("hashrate: the solver's number %d does not verify (%v)", res.Number, err)
	}
	return res.MS, nil
}

// serveHashrate serves the page at / and the worker at /worker.js on
// loopback.
func serveHashrate(worker []byte) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("hashrate: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, hashratePage)
	})
	mux.HandleFunc("GET /worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(worker)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}

// thousands formats a rate as a whole number with thousands separators.
func thousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
