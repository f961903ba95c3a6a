# waitingroom: the two commands are `make run` and `make test`.
GO ?= go
PKGS := ./...

.PHONY: run test generate lint bench drill

## run: serve the demo room at http://127.0.0.1:8080/r/demo (embedded Redis unless REDIS_URL is set).
## It builds bin/waitingroom first and says so: the first build compiles every dependency (about a
## minute on 2 cores), later ones take seconds. Ctrl-C stops the server (exec: it gets the signal).
run:
	@echo "building waitingroom into bin/ (the first build takes about a minute)..."
	$(GO) build -o bin/waitingroom .
	@echo "starting bin/waitingroom (Ctrl-C stops it)"
	exec ./bin/waitingroom

## test: every test against real Redis, PostgreSQL, Chromium and nginx, in three runs side by side
## (make -j3; each run's output is printed whole when it ends); each ends with its list of skipped
## tests and why (=== Skipped), then gotestsum's DONE line. Each part's events, with every
## test's time, are kept in artifacts/test/<part>.json (go test -json).
## test-root: web/e2e (browser tests, drill smokes, the binary's commands) but the long tests of
## test-long, without the race detector: its tests drive the same web and server code that
## test-packages runs raced, and wait on pages. The drill smokes and the heavier browser tests run
## first, one at a time (each drill under 20 s); then the other browser tests, four at a time, in
## one Chromium (a tab and a cookie jar each).
## test-long: the three longest tests of web/e2e, each parallel: the accessibility sweep of every
## page state, and the two whole sales (a buyer's and an operator's). In a run of their own they
## start at once, beside test-root's one-at-a-time tests, instead of after them. The e2e test binary
## is built once (test-e2e-build) for both runs.
## test-packages: every other package with the race detector, two packages at a time (-p 2): their
## tests wait mostly on Redis and on one another, not on the CPU; see docs/TESTS.md.
## The -timeouts are bounds on a hang, not on speed. Figures: docs/TESTS.md.
test:
	@$(MAKE) --no-print-directory -j3 --output-sync=line test-root test-long test-packages

.PHONY: test-root test-long test-e2e-build test-packages test-stress
# The tests build with -trimpath: the checkout's path is left out of what is compiled, so that a
# fresh clone reuses the build cache of any other checkout of the same code.
TESTENV := GOFLAGS="-trimpath $(GOFLAGS)"
# LONG are the tests that test-long runs and test-root skips.
LONG := ^(TestBrowserWholeEvent|TestBrowserOperatorDay|TestBrowserEveryStateIsAccessible)$$
test-e2e-build:
	@$(TESTENV) $(GO) test -count=1 -run '^$$' ./web/e2e >/dev/null

test-root: test-e2e-build
	@mkdir -p artifacts/test
	$(TESTENV) $(GO) tool gotestsum --jsonfile artifacts/test/root.json --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 -parallel 4 -timeout 20m -skip '$(LONG)' ./web/e2e

test-long: test-e2e-build
	@mkdir -p artifacts/test
	$(TESTENV) WR_EVENT_AWAY=80s $(GO) tool gotestsum --jsonfile artifacts/test/long.json --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 -parallel 6 -timeout 20m -run '$(LONG)' ./web/e2e

test-packages:
	@mkdir -p artifacts/test
	$(TESTENV) $(GO) tool gotestsum --jsonfile artifacts/test/packages.json --format pkgname-and-test-fails --format-hide-empty-pkg -- -race -p 2 -count=1 -parallel 4 -timeout 15m $$($(GO) list $(PKGS) | grep -vx waitingroom/web/e2e)

## test-stress: `make test` with one core kept busy by stress-ng (Debian's stress-ng) for as long
## as it runs: how a test that leans on timing is found before CI finds it.
test-stress:
	@command -v stress-ng >/dev/null 2>&1 || { echo "test-stress needs stress-ng (apt-get install stress-ng)"; exit 1; }
	@stress-ng --cpu 1 --timeout 60m --quiet & busy=$$!; trap 'kill $$busy 2>/dev/null' EXIT; $(MAKE) --no-print-directory test

## generate: regenerate the templ components
generate:
	$(GO) generate ./...

## lint: gofmt, go vet, the import direction (.ci/imports), a clean `templ generate`, and govulncheck (a loud SKIPPED line where its
## database cannot be reached; GOVULNDB=file:///path/to/vulndb for a local copy: see .ci/vulncheck)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet $(PKGS)
	bash .ci/imports
	$(GO) tool templ generate >/dev/null 2>&1
	@if [ -n "$$(git status --porcelain -- '*_templ.go')" ]; then echo "templ generate changed files; commit them"; git status --porcelain -- '*_templ.go'; exit 1; fi
	bash .ci/layout --check
	bash .ci/vulncheck

## bench: Go benchmarks and loopback loads (see BENCHMARKS.md); not part of `make test`
bench:
	bash k6/bench.sh

## drill: the full failure drills (1,000 pages through a Redis restart, the core's packages' tests
## on a Redis Cluster, 5,000 buyers behind each of the three gate guards) and the whole-event
## browser test with its 3-minute absence (minutes); `make test` runs each as a short smoke
## (under 20 s each; an 80 s absence, 200 gate buyers)
drill:
	$(GO) test -count=1 -timeout 30m -run 'TestDrill|TestBrowserWholeEvent' -v ./web/e2e -args -drill.full -event.away=3m
