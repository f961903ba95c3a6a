# waitingroom: the two commands are `make run` and `make test`.
GO ?= go
PKGS := ./...

.PHONY: run test generate lint bench drill

## run: serve the demo room at http://127.0.0.1:8080/r/demo (embedded Redis unless REDIS_URL is set)
run:
	$(GO) run .

## test: every test, with the race detector, against real Redis, PostgreSQL, Chromium and nginx;
## it ends with the list of skipped tests and why (=== Skipped), then gotestsum's DONE line.
## -parallel 48 lets every test of the root package start at once: it bounds its browser tests
## and drills itself (two at a time, heavy_test.go), and the whole-event test starts at once
test:
	WR_EVENT_AWAY=80s $(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -race -count=1 -parallel 48 -timeout 9m50s $(PKGS)

## generate: regenerate the templ components
generate:
	$(GO) generate ./...

## lint: gofmt, go vet, a clean `templ generate`, and govulncheck (a loud SKIPPED line where its
## database cannot be reached; GOVULNDB=file:///path/to/vulndb for a local copy: see .ci/vulncheck)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool templ generate >/dev/null 2>&1
	@if [ -n "$$(git status --porcelain -- '*_templ.go')" ]; then echo "templ generate changed files; commit them"; git status --porcelain -- '*_templ.go'; exit 1; fi
	bash .ci/vulncheck

## bench: Go benchmarks and loopback loads (see BENCHMARKS.md); not part of `make test`
bench:
	bash k6/bench.sh

## drill: the full failure drills, the gate drill (5,000 buyers behind each of the three guards,
## TestDrillGate) and the whole-event browser test with its 3-minute absence (minutes);
## `make test` runs them as short smokes (an 80 s absence, 200 gate buyers)
drill:
	$(GO) test -count=1 -timeout 30m -run 'TestDrill|TestBrowserWholeEvent' -v . -args -drill.full -event.away=3m
