# reclaim — the two commands a newcomer needs are `make demo` and `make test`;
# `make test-scale` runs the long scale tests that `make test` leaves out.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The Dockerfile's build: static, trimmed, stripped, without grpc's
# x/net/trace (TAGS: see the Dockerfile) (testenv.BuildReclaim reads the
# Dockerfile, and a test holds this file to it). A build with more tags
# adds them to TAGS (-tags $(TAGS),demo): a second -tags would replace it.
TAGS := grpcnotrace
BUILDFLAGS := -trimpath -buildvcs=false
# lint and bench build as the image and the demo do (STATIC): the three share
# one compile of the SDKs and client-go in Go's cache instead of two (the
# race-detecting tests need cgo, a third).
STATIC := CGO_ENABLED=0
LDFLAGS := -s -w -X reclaim.dev/reclaim/internal/app.Version=$(VERSION)
# The end-to-end tests run a real etcd, kube-apiserver and (for the garbage
# collector behind a Job's background delete) kube-controller-manager, and
# the S3 and GCS the agent tests publish to (s3server, gcsserver), built from
# the Go module proxy into this git-ignored folder (about 6 minutes the
# first time).
export RECLAIM_TESTBINS ?= $(CURDIR)/.cache/testbins

.PHONY: build demo test test-race test-scale test-unit testbins testdeps lint bench clean

build:
	$(STATIC) $(GO) build $(BUILDFLAGS) -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/reclaim ./cmd/reclaim

# A dry-run on the embedded simulated fleet: nothing to install, nothing deleted.
# It also writes the report email's bodies and charts: open demo-report.html in
# a browser.
# The demo and its fakes exist only in a -tags demo build: `make build` and the
# image link none of them. It runs as a pod would: built as the image is,
# with an environment cleared of this machine's variables (no HOME, no CA
# or proxy variables; docs/operations.md lists what reclaim reads).
# Go's build says nothing after its downloads: the build says what it does
# and, when done, how long it took.
demo:
	@echo "demo: building reclaim with the simulated fleet (the first build compiles the cloud SDKs" \
		"and the Kubernetes client: about 5 minutes on 2 cores; later ones reuse Go's build cache)…"
	@start=$$(date +%s) && \
	$(STATIC) $(GO) build $(BUILDFLAGS) -tags $(TAGS),demo -ldflags "$(LDFLAGS)" -o .cache/reclaim-demo ./cmd/reclaim && \
	s=$$(($$(date +%s) - start)) && echo "demo: built .cache/reclaim-demo in $$((s / 60))m$$((s % 60))s"
	env -i PATH=/usr/bin:/bin .cache/reclaim-demo demo --email-files demo-report

# Also compiles deploy/test/render (kustomize and Helm as Go libraries, a
# separate module) so that its first build, about 1.5 minutes, happens before
# `go test`'s timeout starts; e2e/deploy_test.go then only links it.
testbins:
	internal/testenv/testbins/build.sh kube-controller-manager
	cd deploy/test && $(GO) build -o /dev/null ./render

# The email end-to-end test sends to a real SMTP server, Debian's
# python3-aiosmtpd, and the email's HTML is laid out by Debian's headless
# chromium; the demo's metrics are checked by Debian's promtool (package
# prometheus); all installed here when missing (needs root and apt-get).
testdeps:
	@/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null || python3 -c 'import aiosmtpd' 2>/dev/null || \
		{ apt-get update && apt-get install -y python3-aiosmtpd; }
	@command -v chromium >/dev/null 2>&1 || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	@command -v promtool >/dev/null 2>&1 || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; }

# Every test but the scale tests, including the end-to-end tests in ./e2e
# against real apiservers and a real SMTP server: run it before every push.
# It builds as the image, lint and the demo do (STATIC, BUILDFLAGS, TAGS): the
# tests, the binary the end-to-end tests run and the demo share one compile
# of the SDKs and client-go. `make test-race` runs the race detector.
#
# The tests run with a pod's environment, not this machine's: PATH, an empty
# HOME, Go's own settings and the tests' RECLAIM_* knobs, and nothing else
# (no CA, proxy, cloud or kube variables). testenv.Pod clears the binary's
# further.
test: testdeps testbins
	$(PODENV) $(STATIC) $(GO) test $(BUILDFLAGS) -tags $(TAGS),demo $(TESTLDFLAGS) -count=1 -timeout 30m ./...

# The race detector over every package but ./e2e (whose concurrency is in
# the binaries it starts, built as the image is, without it), in -short mode:
# the long tests that exercise no concurrency (a year of usage history, the
# demo's report streamed whole, the charts drawn) skip themselves, as the
# detector makes them ten times slower and finds nothing there. Run it when
# you change code that runs concurrently: the applier's parallel batches, the
# state store's lock, the daemon, the fleet's reads, the API pacing. CI runs
# it. It needs cgo (a C compiler) and compiles everything a second time.
test-race:
	$(PODENV) $(GO) test -race -short -tags demo $(TESTLDFLAGS) -count=1 -timeout 30m $$($(GO) list ./... | grep -v /e2e)

# The scale tests, which take minutes each, skip themselves in `make test`
# (testenv.Scale) and run here, and in CI: the 100,000-Job backlog, the full
# registry of 110,000 images, states of 150,000 and of a million clocks. Run
# them when you change what a large fleet exercises: paging, the state
# store, the caps and pacing of deletes, the stock install's config.
# scale_test.go holds these lists to the tests that call testenv.Scale.
SCALE_TESTS = TestStockCronJobClearsABacklogOfFinishedJobs TestStockCronJobTrimsAFullRegistry \
	TestConfigMapStateStoreHoldsALargeState TestDigestClocksOfAMillionFitTheStore
SCALE_PKGS = ./e2e ./reconcile/engine
test-scale: testbins
	$(PODENV) RECLAIM_SCALE=1 $(STATIC) $(GO) test $(BUILDFLAGS) -tags $(TAGS),demo $(TESTLDFLAGS) -count=1 -timeout 60m \
		-run "^($$(echo $(SCALE_TESTS) | tr ' ' '|'))$$" $(SCALE_PKGS)

# Without the end-to-end tests (no apiserver needed).
test-unit:
	$(PODENV) $(STATIC) $(GO) test $(BUILDFLAGS) -tags $(TAGS),demo $(TESTLDFLAGS) -count=1 $$($(GO) list ./... | grep -v /e2e)

# go test links every test binary anew on each run (only results are
# cached): without DWARF, which no test reads, a link takes a quarter less.
TESTLDFLAGS = -ldflags "-s -w"

PODENV = rm -rf .cache/home && mkdir -p .cache/home && env -i PATH="$$PATH" HOME="$(CURDIR)/.cache/home" \
	CI="$$CI" RECLAIM_TESTBINS="$(RECLAIM_TESTBINS)" RECLAIM_TESTENV_KEEP="$$RECLAIM_TESTENV_KEEP" \
	RECLAIM_PYTHON="$$RECLAIM_PYTHON" RECLAIM_FLEET_TRACE="$$RECLAIM_FLEET_TRACE" GOCACHE="$$($(GO) env GOCACHE)" \
	GOMODCACHE="$$($(GO) env GOMODCACHE)" GOPATH="$$($(GO) env GOPATH)" GOFLAGS="$$($(GO) env GOFLAGS)" \
	GOPROXY="$$($(GO) env GOPROXY)" GOSUMDB="$$($(GO) env GOSUMDB)" GOTOOLCHAIN="$$($(GO) env GOTOOLCHAIN)"

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(STATIC) $(GO) vet $(BUILDFLAGS) -tags $(TAGS) ./...
	$(STATIC) $(GO) vet $(BUILDFLAGS) -tags $(TAGS),demo ./cmd/reclaim

# Speed and API-call targets live here, never in timed unit tests.
bench:
	$(STATIC) $(GO) test $(BUILDFLAGS) -tags $(TAGS),demo -run '^$$' -bench . -benchtime 1x -benchmem $$($(GO) list ./... | grep -v /e2e)

clean:
	rm -rf bin .cache
