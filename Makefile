# rdmabench — build and test. `make test` runs every test lane that can run
# on this machine (see README "Tests").
GO      ?= go
BIN     := bin/rdmabench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test test-unit lint e2e clean fuzz-parsers bench-parsers assets test-report bench-report

build: assets
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rdmabench

# Unit tests: parsers, scenarios, planner, report (fast, no tools needed).
test-unit:
	$(GO) test -count=1 ./...

test: build test-unit e2e-rdma

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

e2e: build

clean:
	rm -rf bin results

# Fuzz the scenario loader and validator for a bounded time.
FUZZTIME ?= 60s
.PHONY: fuzz-scenarios
fuzz-scenarios:
	$(GO) test ./scenarios -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
# Planner benchmark: a 512-endpoint all-to-all (ns/op, B/op, allocs/op).
.PHONY: bench-plan
bench-plan:
	$(GO) test -run '^$$' -bench CompileAllToAll512 -benchmem -count 3 ./runner/
# Parsers: fuzz each one for FUZZTIME (not part of `make test`), and
# measure parse throughput on a generated 10 MB perftest capture.
FUZZTIME ?= 60s
fuzz-parsers:
	for f in FuzzParsePerftest FuzzParsePerftestJSON FuzzParseRping FuzzParseUCXPerftest FuzzParseIperf3 FuzzDetect FuzzFastDecimal; do \
		$(GO) test ./parsers -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) || exit 1; done

bench-parsers:
	$(GO) test ./parsers -run '^$$' -bench ParsePerftest -benchmem
# Runner: the harness's own overhead per job (100 jobs of /bin/true).
.PHONY: bench-runner
bench-runner:
	$(GO) test -run '^$$' -bench HarnessOverhead -benchtime 3x ./runner/

# Reports: ECharts is embedded in the binary from the npm package pinned in
# report/assets/package-lock.json; the library itself is not committed.
ECHARTS := report/assets/dist/echarts.min.js
assets: $(ECHARTS)
$(ECHARTS): report/assets/package.json report/assets/package-lock.json
	cd report/assets && npm ci --no-audit --no-fund --loglevel=error
	cp report/assets/node_modules/echarts/dist/echarts.min.js $@

# The report lane alone: golden files, compare decisions, CLI, and the HTML
# in headless Chromium (skipped without chromium unless CI=true).
test-report: assets
	$(GO) test -count=1 ./report/... ./cmd/rdmabench/...

# HTML size and Chromium render time of a 64-endpoint all-to-all report.
bench-report: assets
	$(GO) test -run '^$$' -bench 'HTML' -benchtime 5x ./report/

# The soft-RoCE lane: two QEMU VMs with rdma_rxe, built from Debian packages
# (images/), driven over ssh: real ib_write_bw, ib_read_lat, rping and
# ucx_perftest between two kernels. Needs qemu-system-x86 (./.ci/setup).
.PHONY: e2e-rdma
e2e-rdma: build
	$(MAKE) -C images softroce
	RDMABENCH_SOFTROCE=$(CURDIR)/.work/softroce $(GO) test -count=1 -timeout 20m -v ./test/e2erdma/

